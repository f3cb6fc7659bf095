/**
 * @module `hpd keys`: create, list and revoke API keys in the state store, also while a server runs on
 * the same store (LMDB is multi-process; a revocation applies to the server's next request).
 *
 * `create` prints only the plaintext key on stdout, so `KEY=$(hpd keys create --tier pro)` captures
 * exactly the key; everything meant for the operator (key id, owner, tier changes) goes to stderr.
 * The plaintext is never stored and never shown again.
 */
import { join } from 'node:path';
import { createKey, KEY_PATTERN, listKeys, MAX_LABEL_LENGTH, purgeRevokedKeys, revokeKey, UnknownKeyError } from '../policy/api-keys.ts';
import { assertLmdbFilesSound } from '../policy/lmdb-deep-check.ts';
import { STATE_DATABASES, STATE_FILE } from '../policy/lmdb-store.ts';
import { openStateBackend } from '../policy/state-backend.ts';
import type { StateStore } from '../policy/state-store.ts';
import { USER_ID_PATTERN } from '../policy/state-store.ts';
import { isTier, TIERS, type Tier } from '../policy/tiers.ts';
import { stateDir } from './paths.ts';
import { parseCommandArgs, unknownSubcommand, type OptionSpec } from './args.ts';
import { redisConfig } from './redis-config.ts';
import { CliError, UsageError } from './usage-error.ts';

export const KEYS_USAGE = `Usage: hpd keys <command>

Commands:
  create --tier TIER [--user ID] [--label TEXT]
                  mint a key; prints only the key on stdout (shown once: store it now).
                  Without --user a new user is created; with --user the user is created when
                  missing, and otherwise its tier is set to TIER. TIER: ${TIERS.join(', ')}
  list [--json]   one line per key, tab-separated: id, user, label, created, last used, revoked
                  ("-" when empty). Never shows keys or hashes
  revoke KEY_ID   revoke a key (KEY_ID as shown by list, key_...); effective immediately
  purge --revoked-before DATE
                  delete the records of keys revoked before DATE (YYYY-MM-DD, UTC midnight, or
                  an ISO 8601 time); revoked keys are otherwise listed forever. Keys in use are
                  never touched. Prints the purged ids on stdout

State: $HPD_STATE_DIR, default var/ in the repository.`;

/** Parses a tier argument; the error lists the valid names. */
export function parseTier(text: string | undefined, what: string): Tier {
  if (text === undefined) throw new UsageError(`${what} is required (${TIERS.join(', ')})`);
  if (!isTier(text)) throw new UsageError(`unknown tier "${text}" (valid: ${TIERS.join(', ')})`);
  return text;
}

/** Checks a user id argument before anything is opened, so the mistake is reported as usage. */
export function checkUserId(userId: string): string {
  if (!USER_ID_PATTERN.test(userId)) {
    throw new UsageError(`invalid user id "${userId}" (1-128 letters, digits or . _ @ : + -, starting with a letter or digit)`);
  }
  return userId;
}

/**
 * Opens the store for one command (Redis when HPD_REDIS_URL is set, as for `hpd serve`) and always
 * closes it, so writes are committed before exit. An embedded store's file is read whole first
 * (lmdb-deep-check.ts): a damaged one is refused with one line and left as it is.
 */
export async function withStore<T>(fn: (store: StateStore) => Promise<T> | T): Promise<T> {
  const redis = redisConfig(process.env);
  // Read whole before it is opened: a command writing into a damaged file would spread the damage.
  if (redis.url === undefined || redis.url === '')
    await assertLmdbFilesSound([{ path: join(stateDir(), STATE_FILE), spec: STATE_DATABASES }]);
  const backend = await openStateBackend({ stateDir: stateDir(), redisUrl: redis.url, redisGraceMs: redis.graceMs, log: () => {} });
  try {
    return await fn(backend.store);
  } finally {
    await backend.close();
  }
}

function parse(
  command: string,
  args: readonly string[],
  options: OptionSpec,
): { values: Readonly<Record<string, string | boolean | undefined>>; positionals: readonly string[] } {
  return parseCommandArgs(`keys ${command}`, args, options, true);
}

function noPositionals(command: string, positionals: readonly string[]): void {
  if (positionals.length > 0) throw new UsageError(`${command} takes no argument "${positionals[0]}"`);
}

export async function keysCommand(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${KEYS_USAGE}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'create') return create(rest);
  if (sub === 'list') return list(rest);
  if (sub === 'revoke') return revoke(rest);
  if (sub === 'purge') return purge(rest);
  throw unknownSubcommand('keys', sub, ['create', 'list', 'revoke', 'purge']);
}

async function create(args: readonly string[]): Promise<number> {
  const { values, positionals } = parse('create', args, { tier: { type: 'string' }, user: { type: 'string' }, label: { type: 'string' } });
  noPositionals('keys create', positionals);
  const tier = parseTier(values.tier as string | undefined, '--tier');
  const userId = typeof values.user === 'string' ? checkUserId(values.user) : undefined;
  const label = typeof values.label === 'string' ? values.label : undefined;
  if (label !== undefined && (label.length > MAX_LABEL_LENGTH || /\p{Cc}/u.test(label))) {
    throw new UsageError(`--label must be at most ${MAX_LABEL_LENGTH} characters without control characters`);
  }
  const created = await withStore((store) =>
    createKey(store, { tier, label: label ?? null, now: Date.now(), ...(userId === undefined ? {} : { userId }) }),
  );
  const user = created.user.id;
  if (created.userChange === 'created') process.stderr.write(`created user ${user} with tier ${tier}\n`);
  if (created.userChange === 'tier-changed')
    process.stderr.write(`changed the tier of user ${user} from ${created.previousTier} to ${tier}\n`);
  process.stderr.write(
    `created key ${created.record.id} for user ${user} (tier ${created.user.tier}); it is shown only once, store it now\n`,
  );
  process.stdout.write(`${created.plaintext}\n`);
  return 0;
}

async function list(args: readonly string[]): Promise<number> {
  const { values, positionals } = parse('list', args, { json: { type: 'boolean' } });
  noPositionals('keys list', positionals);
  const keys = await withStore((store) => listKeys(store));
  if (values.json === true) {
    // Rebuilt field by field so the hash can never leak through a new record field.
    const out = keys.map((k) => ({
      id: k.id,
      user_id: k.user_id,
      label: k.label,
      tier_at_creation: k.tier_at_creation,
      created_at: k.created_at,
      last_used_at: k.last_used_at,
      revoked_at: k.revoked_at,
    }));
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  if (keys.length === 0) process.stderr.write('no API keys\n');
  for (const k of keys) {
    process.stdout.write(`${[k.id, k.user_id, k.label ?? '-', k.created_at, k.last_used_at ?? '-', k.revoked_at ?? '-'].join('\t')}\n`);
  }
  return 0;
}

async function revoke(args: readonly string[]): Promise<number> {
  const { positionals } = parse('revoke', args, {});
  if (positionals.length !== 1) throw new UsageError('keys revoke takes exactly one KEY_ID (key_..., see hpd keys list)');
  const keyId = positionals[0]!;
  // Keeps secrets out of shell history habits: revocation goes by id, never by the key itself.
  if (KEY_PATTERN.test(keyId)) throw new UsageError('keys revoke takes the key id (key_..., see hpd keys list), not the key itself');
  const now = Date.now();
  const rec = await withStore(async (store) => {
    try {
      return await revokeKey(store, keyId, now);
    } catch (err) {
      if (err instanceof UnknownKeyError) throw new CliError(`${err.message} (see hpd keys list)`);
      throw err;
    }
  });
  const at = new Date(now).toISOString();
  if (rec.revoked_at !== at) process.stderr.write(`key ${rec.id} was already revoked at ${rec.revoked_at}\n`);
  else process.stderr.write(`revoked key ${rec.id} of user ${rec.user_id}\n`);
  return 0;
}

/** A --revoked-before value: a date (UTC midnight) or a full ISO 8601 time with its offset. */
function parseCutoff(text: string | undefined): number {
  if (text === undefined) throw new UsageError('keys purge needs --revoked-before DATE (YYYY-MM-DD or an ISO 8601 time)');
  const shaped = /^\d{4}-\d{2}-\d{2}$/.test(text) || /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(text);
  const at = shaped ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(`--revoked-before "${text}" is not a date (YYYY-MM-DD or an ISO 8601 time such as 2026-01-31T12:00:00Z)`);
  if (at > Date.now()) throw new UsageError(`--revoked-before ${text} is in the future`);
  return at;
}

async function purge(args: readonly string[]): Promise<number> {
  const { values, positionals } = parse('purge', args, { 'revoked-before': { type: 'string' } });
  noPositionals('keys purge', positionals);
  const before = parseCutoff(values['revoked-before'] as string | undefined);
  const gone = await withStore((store) => purgeRevokedKeys(store, before));
  for (const k of gone) process.stdout.write(`${k.id}\n`);
  process.stderr.write(`purged ${gone.length} key${gone.length === 1 ? '' : 's'} revoked before ${new Date(before).toISOString()}\n`);
  return 0;
}
