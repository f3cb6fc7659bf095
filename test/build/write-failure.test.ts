/**
 * A build the machine stops: `hpd build` on a full disk printed "unexpected
 * error: ENOSPC: no space left on device, write". It must name the stage and the path, publish
 * nothing, and leave nothing behind. The full disk is real: a 3 MiB tmpfs mounted by the test (root,
 * as the README's test command runs on the project's machines), far smaller than the PY2025 build.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
let mount: string;

before(() => {
  assert.equal(process.getuid?.(), 0, 'this test mounts a small tmpfs: run the suite as root (npm test does on the project machines)');
  mount = mkdtempSync(join(tmpdir(), 'hpd-full-disk-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', mount], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
});

after(() => {
  spawnSync('umount', [mount]);
  rmSync(mount, { recursive: true, force: true });
});

test('a full disk stops hpd build with one line naming the stage, the cause and the path; nothing is left behind', () => {
  const out = join(mount, 'builds');
  mkdirSync(out);
  const env: NodeJS.ProcessEnv = { ...process.env, HPD_CACHE_DIR: join(mount, 'cache') };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, [join(root, 'bin', 'hpd.js'), 'build', '--year', '2025', '--out', out, '--offline', '--quiet'], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0]!,
    new RegExp(
      `^hpd: the build stopped in stage "[a-z ()]+": no space left on the device \\(ENOSPC\\) writing ${out}/2025/\\S+; nothing was published and the current build is unchanged$`,
    ),
  );
  assert.doesNotMatch(r.stderr, /unexpected error/);
  assert.deepEqual(readdirSync(join(out, '2025')), [], 'no temporary build directory is left');
});
