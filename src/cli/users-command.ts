/**
 * @module `hpd users`: set and list users' tiers. The tier applies to every key of the user from the
 * server's next request on (the server reads it per request, no cache), and so does the daily limit:
 * requests already counted today stay counted.
 */
import { listUsers, setUserTier } from '../policy/api-keys.ts';
import { TIERS } from '../policy/tiers.ts';
import { checkUserId, parseTier, withStore } from './keys-command.ts';
import { parseCommandArgs, unknownSubcommand } from './args.ts';
import { UsageError } from './usage-error.ts';

export const USERS_USAGE = `Usage: hpd users <command>

Commands:
  set-tier USER_ID TIER   set a user's tier (${TIERS.join(', ')}); creates the user when missing
  list [--json]           one line per user, tab-separated: id, tier, created, updated, e-mail ("-" when none)

State: $HPD_STATE_DIR, default var/ in the repository.`;

export async function usersCommand(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${USERS_USAGE}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'set-tier') return setTier(rest);
  if (sub === 'list') return list(rest);
  throw unknownSubcommand('users', sub, ['set-tier', 'list']);
}

function parse(command: string, args: readonly string[], withJson: boolean): { json: boolean; positionals: readonly string[] } {
  const parsed = parseCommandArgs(`users ${command}`, args, withJson ? { json: { type: 'boolean' } } : {}, true);
  return { json: parsed.values.json === true, positionals: parsed.positionals };
}

async function setTier(args: readonly string[]): Promise<number> {
  const { positionals } = parse('set-tier', args, false);
  if (positionals.length !== 2) throw new UsageError('users set-tier takes USER_ID TIER');
  const userId = checkUserId(positionals[0]!);
  const tier = parseTier(positionals[1], 'TIER');
  const result = await withStore((store) => setUserTier(store, userId, tier, Date.now()));
  if (result.change === 'created') process.stderr.write(`created user ${userId} with tier ${tier}\n`);
  else if (result.change === 'tier-changed')
    process.stderr.write(`changed the tier of user ${userId} from ${result.previousTier} to ${tier}\n`);
  else process.stderr.write(`user ${userId} already has tier ${tier}\n`);
  return 0;
}

async function list(args: readonly string[]): Promise<number> {
  const { json, positionals } = parse('list', args, true);
  if (positionals.length > 0) throw new UsageError(`users list takes no argument "${positionals[0]}"`);
  const users = await withStore((store) => listUsers(store));
  if (json) {
    // Field by field: a password hash from the future login page must never be printed.
    const out = users.map((u) => ({ id: u.id, tier: u.tier, created_at: u.created_at, updated_at: u.updated_at, email: u.email ?? null }));
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  if (users.length === 0) process.stderr.write('no users\n');
  for (const u of users) process.stdout.write(`${[u.id, u.tier, u.created_at, u.updated_at, u.email ?? '-'].join('\t')}\n`);
  return 0;
}
