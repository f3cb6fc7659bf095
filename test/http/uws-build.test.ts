/**
 * Which uWebSockets.js build each Node runtime loads, and the one line an operator reads when none can:
 * the Node version, the glibc and what to do, for each way a start fails on a real system (a Node major
 * without a build, a build whose glibc is newer than the system's, a binary npm did not install).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { UWS_PACKAGE } from '../../src/http/uws.ts';
import { type Runtime, UWS_BUILDS, unsupportedNodeMessage, uwsLoadFailureMessage } from '../../src/http/uws-build.ts';

const debian12 = (nodeVersion: string): Runtime => ({ nodeVersion, platform: 'linux', arch: 'x64', glibc: '2.36' });
const debian13 = (nodeVersion: string): Runtime => ({ nodeVersion, platform: 'linux', arch: 'x64', glibc: '2.41' });

test('Node 22 loads the build whose binary needs only glibc 2.27; 24 and 26 the current one', () => {
  assert.equal(UWS_BUILDS.get(22), 'uws-legacy');
  assert.equal(UWS_BUILDS.get(24), 'uws-current');
  assert.equal(UWS_BUILDS.get(26), 'uws-current');
  for (const major of [18, 20, 23, 25]) assert.equal(UWS_BUILDS.get(major), undefined, `Node ${major}`);
});

test('the suite runs on the pinned Node 22 and loads its build', () => {
  assert.equal(process.versions.node.split('.')[0], '22', `the suite runs on Node ${process.version}, not the pinned 22`);
  assert.equal(UWS_PACKAGE, 'uws-legacy');
});

test('a Node major without a build: one line with the version, the glibc, the supported majors and the way out', () => {
  const line = unsupportedNodeMessage(debian12('v20.20.2'));
  assert.doesNotMatch(line, /\n/);
  assert.match(line, /Node v20\.20\.2 on linux-x64 with glibc 2\.36/);
  assert.match(line, /supported Node majors: 22, 24, 26/);
  assert.match(line, /npm start/);
});

test('Node 24 on a glibc older than 2.38 names both versions and what to do', () => {
  const reason =
    "This version of uWS.js (v20.67.0) supports only Node.js versions 22, 24 and 26\n\nError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found";
  const line = uwsLoadFailureMessage(debian12('v24.12.0'), 'uws-current', reason);
  assert.doesNotMatch(line, /\n/);
  assert.match(line, /Node v24\.12\.0 on linux-x64 with glibc 2\.36 needs glibc ≥ 2\.38/);
  assert.match(line, /pinned Node 22/);
});

test('a binary npm did not install for this Node says to run npm ci under it', () => {
  const reason = "Cannot find module '@uwsjs/linux-x64-24'\nRequire stack:\n- /opt/hpd/node_modules/uws-current/uws.js";
  const line = uwsLoadFailureMessage(debian13('v24.12.0'), 'uws-current', reason);
  assert.doesNotMatch(line, /\n/);
  assert.match(line, /binary for Node v24\.12\.0 on linux-x64 with glibc 2\.41 is not installed/);
  assert.match(line, /run `npm ci` under this Node/);
});

test("any other load failure keeps the loader's own line, not the wrapper's paragraph", () => {
  const reason = 'This version of uWS.js (v20.51.0) supports only Node.js versions 18, 20, 22 and 23\n\nError: invalid ELF header';
  const line = uwsLoadFailureMessage({ ...debian12('v22.23.3'), arch: 'arm64' }, 'uws-legacy', reason);
  assert.match(line, /could not load on Node v22\.23\.3 on linux-arm64 with glibc 2\.36 \(Error: invalid ELF header\)/);
});

test('hpd serve on a Node without a build stops with that one line and exit 1', () => {
  // The rule is applied as the CLI applies it: a real `hpd serve`, under this Node, told by Node's own
  // `--import` that process.versions.node reads as a major no build exists for.
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const fake =
    'data:text/javascript,Object.defineProperty(process.versions, "node", { value: "20.20.2" }); Object.defineProperty(process, "version", { value: "v20.20.2" });';
  const r = spawnSync(process.execPath, ['--import', fake, 'bin/hpd.js', 'serve', '--port', '0'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /uWebSockets\.js has no build for Node v20\.20\.2 on /);
});
