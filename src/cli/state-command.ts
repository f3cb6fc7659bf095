/**
 * @module `hpd state`: verify and back up the embedded state files (API keys and users in `state.mdb`,
 * OAuth grants, clients and sessions in `oauth.mdb`), also while `hpd serve` runs on them.
 *
 * `verify` reads each file as every command does before opening it (lmdb-deep-check.ts: the meta pages,
 * then every page, key and value, in a child process), so damage the meta pages do not show is found
 * before a request meets it. Damage in pages LMDB no longer references is not found, and harms nothing.
 * `backup DIR` writes a compacted, consistent copy of each file (LMDB's own copy, taken in a read
 * transaction: writers are not stopped) and verifies the copies. Restoring is copying them back with
 * hpd stopped (README, "Limits and safety").
 */
import { chmodSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open } from 'lmdb';
import { OAUTH_DATABASES, OAUTH_FILE } from '../auth-server/lmdb-adapter.ts';
import { assertLmdbFilesSound, lmdbDeepCheck, type DatabaseSpec } from '../policy/lmdb-deep-check.ts';
import { STATE_DATABASES, STATE_FILE } from '../policy/lmdb-store.ts';
import { parseCommandArgs, unknownSubcommand } from './args.ts';
import { stateDir } from './paths.ts';
import { UsageError } from './usage-error.ts';

export const STATE_USAGE = `Usage: hpd state <command>

Commands:
  verify        read every page and record of ${STATE_FILE} and ${OAUTH_FILE}; exit 1 when one is damaged
  backup DIR    write a consistent, compacted copy of each into DIR (new or empty), and verify the copies;
                safe while hpd serve runs. Restore: stop hpd, copy the files back into the state directory

State: $HPD_STATE_DIR, default var/ in the repository. With HPD_REDIS_URL the state is in Redis: back
it up with Redis's own persistence (README, "Running several instances").`;

/** The files of the state directory and the databases each holds (their names are the stores' own). */
const FILES: ReadonlyArray<{ readonly file: string; readonly spec: DatabaseSpec }> = [
  { file: STATE_FILE, spec: STATE_DATABASES },
  { file: OAUTH_FILE, spec: OAUTH_DATABASES },
];

export async function stateCommand(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${STATE_USAGE}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'verify') {
    const { positionals } = parseCommandArgs('state verify', rest, {}, true);
    if (positionals.length > 0) throw new UsageError(`state verify takes no argument "${positionals[0]}"`);
    return (await verify(stateDir())) ? 0 : 1;
  }
  if (sub === 'backup') {
    const { positionals } = parseCommandArgs('state backup', rest, {}, true);
    if (positionals.length !== 1) throw new UsageError('state backup takes exactly one DIR');
    return backup(stateDir(), resolve(positionals[0]!));
  }
  throw unknownSubcommand('state', sub, ['verify', 'backup']);
}

/**
 * One line per file on stdout (damage on stderr); true when every existing file is sound. Each file is
 * read whole by a child process (lmdb-deep-check.ts), both at once.
 */
async function verify(dir: string): Promise<boolean> {
  const checks = await Promise.all(FILES.map(({ file, spec }) => lmdbDeepCheck(join(dir, file), spec)));
  let sound = true;
  FILES.forEach(({ file, spec }, i) => {
    const path = join(dir, file);
    const check = checks[i];
    if (check === null || check === undefined) {
      process.stdout.write(`${path}: absent (created when first needed)\n`);
    } else if ('problem' in check) {
      process.stderr.write(`${path}: damaged: ${check.problem}\n`);
      sound = false;
    } else {
      const counts = Object.keys(spec).map((name) => `${name} ${check.databases[name] ?? 0}`);
      process.stdout.write(`${path}: ok (${counts.join(', ')})\n`);
    }
  });
  return sound;
}

async function backup(dir: string, to: string): Promise<number> {
  if (existsSync(to) && readdirSync(to).length > 0) throw new UsageError(`${to} is not empty: a backup never overwrites files`);
  // A damaged page would be copied as it is, or kill the copy: each file is read whole first.
  await assertLmdbFilesSound(FILES.map(({ file, spec }) => ({ path: join(dir, file), spec })));
  // The copies hold what the originals do (key hashes, refresh tokens, client secrets): owner-only.
  mkdirSync(to, { recursive: true, mode: 0o700 });
  for (const { file } of FILES) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    const root = open({ path, noSubdir: true, readOnly: true, maxDbs: 9, compression: false });
    try {
      await root.backup(join(to, file), true);
      chmodSync(join(to, file), 0o600);
    } finally {
      await root.close();
    }
    process.stderr.write(`backed up ${path} to ${join(to, file)}\n`);
  }
  return (await verify(to)) ? 0 : 1;
}
