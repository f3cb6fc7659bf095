/**
 * Random damage inside `state.mdb` and `oauth.mdb` (meta pages and length intact) never kills a command:
 * `hpd state verify`, `hpd keys create` and `hpd serve` each either work (the damage is in pages nothing
 * reaches) or refuse with one line naming the file as damaged, exit 1, and leave it byte for byte; verify
 * never says ok on a file whose records changed. Seeded trials: a failure names its seed
 * (state-damage.ts); `state-damage-run.ts` runs 100 per file.
 */
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { walkLmdbFile } from '../../src/policy/lmdb-page-walk.ts';
import { seededRandom } from '../helpers/state-population.ts';
import {
  contentDigest,
  copyState,
  describeTrial,
  fileHash,
  hpd,
  prepareTrials,
  STATE_FILES,
  trial,
  type Trial,
  type TrialSetup,
} from './state-damage.ts';

const TRIALS_PER_FILE = 8;
/** Of those, the first ones also start `hpd serve`. */
const WITH_SERVE = 2;
const FIRST_SEED = 20_261_126;

let dir: string;
let setup: TrialSetup;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-state-damage-'));
  setup = await prepareTrials(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

for (const file of STATE_FILES) {
  test(`${file}: random damage is refused in one line or harmless, never a signal`, { timeout: 600_000 }, async () => {
    const trials: Trial[] = [];
    for (let i = 0; i < TRIALS_PER_FILE; i++) trials.push(await trial(setup, file, FIRST_SEED + i, i < WITH_SERVE));
    const failed = trials.filter((t) => t.failures.length > 0);
    assert.deepEqual(failed.map(describeTrial), [], 'every trial holds');
    assert.ok(
      trials.some((t) => t.verify === 'refused'),
      `some damage is found: ${trials.map(describeTrial).join('\n')}`,
    );
  });
}

test('damage confined to free pages harms nothing: commands work, and a backup carries none of it', { timeout: 120_000 }, async () => {
  const state = join(dir, 'free-pages');
  copyState(setup.pristine, state);
  const file = join(state, 'state.mdb');
  const walked = walkLmdbFile(file);
  assert.ok(
    typeof walked !== 'string' && walked.freePages.length > 0,
    `the populated file has free pages: ${JSON.stringify(walked, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`,
  );
  const page = walked.freePages[0]!;
  const random = seededRandom(page);
  const garbage = Buffer.from(Array.from({ length: 4096 }, () => Math.floor(random() * 256)));
  const fd = openSync(file, 'r+');
  writeSync(fd, garbage, 0, garbage.length, page * 4096);
  closeSync(fd);
  const env = { ...setup.env, HPD_STATE_DIR: state };
  const verified = await hpd(['state', 'verify'], env);
  assert.equal(verified.status, 0, verified.stderr);
  assert.equal(await contentDigest(file), setup.digests['state.mdb'], 'every record as it was');
  const to = join(dir, 'free-pages-backup');
  const backup = await hpd(['state', 'backup', to], env);
  assert.equal(backup.status, 0, backup.stderr);
  assert.equal(readFileSync(join(to, 'state.mdb')).indexOf(garbage.subarray(0, 64)), -1, 'the compacting copy holds no free page');
  const before = fileHash(file);
  const created = await hpd(['keys', 'create', '--tier', 'pro'], env);
  assert.equal(created.status, 0, created.stderr);
  assert.notEqual(fileHash(file), before);
  const again = await hpd(['state', 'verify'], env);
  assert.equal(again.status, 0, again.stderr);
});
