/**
 * Random damage inside `state.mdb` and `oauth.mdb` (meta pages and length intact) never kills a command:
 * `hpd state verify`, `hpd keys create` and `hpd serve` each either work (the damage is in pages nothing
 * reaches) or refuse with one line naming the file as damaged, exit 1, and leave it byte for byte; verify
 * never says ok on a file whose records changed. Seeded trials: a failure names its seed
 * (state-damage.ts); `state-damage-run.ts` runs 100 per file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildFixture } from '../helpers/fixture-build.ts';
import { freePorts } from '../helpers/services.ts';
import { populateState } from '../helpers/state-population.ts';
import { contentDigest, describeTrial, STATE_FILES, trial, type Trial, type TrialSetup } from './state-damage.ts';

const TRIALS_PER_FILE = 8;
/** Of those, the first ones also start `hpd serve`. */
const WITH_SERVE = 2;
const FIRST_SEED = 20_261_126;

let dir: string;
let setup: TrialSetup;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-state-damage-'));
  const builds = await buildFixture(join(dir, 'fixture'));
  const pristine = join(dir, 'pristine');
  await populateState(pristine, 1);
  const [port, mcpPort, authPort] = (await freePorts(3)) as [number, number, number];
  const digests = {
    'state.mdb': await contentDigest(join(pristine, 'state.mdb')),
    'oauth.mdb': await contentDigest(join(pristine, 'oauth.mdb')),
  };
  assert.ok(digests['state.mdb'] !== null && digests['oauth.mdb'] !== null, 'the undamaged files read');
  setup = {
    pristine,
    digests: digests as Record<(typeof STATE_FILES)[number], string>,
    work: join(dir, 'trials'),
    env: {
      ...process.env,
      HPD_DATA_DIR: builds,
      HPD_PORT: String(port),
      HPD_MCP_PORT: String(mcpPort),
      HPD_AUTH_PORT: String(authPort),
      HPD_DRAIN_SECONDS: '0',
      HPD_WORKERS: '0',
    },
  };
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
