/**
 * `hpd build --no-switch`: the new build is published beside the current one, which keeps serving, so an
 * operator can `hpd builds diff` it before `hpd builds use` switches to it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { currentHash } from '../../build/publish.ts';
import { buildFixture } from '../helpers/fixture-build.ts';
import { planAttributesCsv, writeFixtureInputs } from '../helpers/fixture-inputs.ts';
import { runHpd } from '../helpers/run-hpd.ts';

test('hpd build --no-switch publishes without moving current; builds diff and builds use then take over', {
  timeout: 120_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-no-switch-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const root = await buildFixture(dir);
  const a = currentHash(root, 2025)!;
  const inputs = writeFixtureInputs(join(dir, 'in-b'), 2025, {
    planAttributes: planAttributesCsv(2025).replaceAll('2024-11-20 01:02:03', '2024-12-01 01:02:03'),
  });
  const env = { ...process.env, HPD_DATA_DIR: root, HPD_CACHE_DIR: join(dir, 'cache') };

  const built = await runHpd(['build', '--year', '2025', '--sources', inputs.sourcesFile, '--offline', '--no-switch', '--quiet'], {
    env,
    cwd: dir,
    timeoutMs: 60_000,
  });
  assert.equal(built.code, 0, built.stderr);
  const b = readdirSync(join(root, '2025')).find((n) => /^[0-9a-f]{64}$/.test(n) && n !== a)!;
  assert.ok(b !== undefined, 'the new build is published');
  assert.equal(currentHash(root, 2025), a, 'current did not move');
  assert.match(
    built.stdout,
    new RegExp(`not current +compare: hpd builds diff 2025:${b.slice(0, 12)} 2025; switch: hpd builds use 2025 ${b.slice(0, 12)}`),
  );

  const diff = await runHpd(['builds', 'diff', `2025:${b.slice(0, 12)}`, '2025', '--json'], { env, cwd: dir });
  assert.equal(diff.code, 0, diff.stderr);
  const use = await runHpd(['builds', 'use', '2025', b.slice(0, 12)], { env, cwd: dir });
  assert.equal(use.code, 0, use.stderr);
  assert.equal(currentHash(root, 2025), b);
});
