// `npm install` / `npm ci` run this last (the `postinstall` script), under the pinned Node that npm
// scripts find first on PATH (node_modules/.bin/node, from the node-<os>-<cpu> optional dependency).
//
// Why: npm decides which per-Node-major binaries to install by the Node *npm itself* runs on, and npm 11
// has no setting to say otherwise. On a machine whose system Node is 20, `npm ci` therefore installs
// uWebSockets.js's Node 20 binary and compiles better-sqlite3 against Node 20's headers — neither loads
// in the Node 22 that runs the service and the tests. When the two majors differ, this finishes the
// install as the pinned Node would have done it: the same lock file reified again under that Node
// (adds the Node 22 uWS binaries, drops the Node 20 ones; nothing is downloaded that the lock does not
// pin, and package-lock.json is not rewritten), then native modules rebuilt against its own headers
// (the node-<os>-<cpu> package ships include/node, so node-gyp needs no download). When npm already
// runs on the pinned major (a Node 22 machine, the Docker image) this does nothing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Native modules compiled from source against the running Node's ABI (the others ship N-API prebuilds). */
const NATIVE_REBUILDS = ['better-sqlite3'].filter((name) => existsSync(join('node_modules', name, 'package.json')));

const npmNode = process.env.npm_node_execpath;
const npmCli = process.env.npm_execpath;
if (process.env.HPD_RUNTIME_INSTALL === '1' || npmNode === undefined || npmCli === undefined) process.exit(0);

const major = (v) => Number(/^v?(\d+)/.exec(v)?.[1]);
const npmNodeVersion = spawnSync(npmNode, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim();
if (major(npmNodeVersion) === major(process.version)) process.exit(0);

process.stderr.write(
  `postinstall: npm ran on Node ${npmNodeVersion}; completing the install for Node ${process.version}, which runs this project\n`,
);
const headers = join(dirname(dirname(process.execPath)), 'include', 'node');
const env = { ...process.env, HPD_RUNTIME_INSTALL: '1' };
// npm exports its settings to scripts as npm_config_*, and a child npm reads those as command-line
// flags; npm 11.19+ refuses `allow-scripts` given that way in a project install (EALLOWSCRIPTS). The
// child reads the same npmrc files itself, so nothing is lost.
delete env.npm_config_allow_scripts;
if (existsSync(join(headers, 'node.h'))) env.npm_config_nodedir = dirname(dirname(headers));
const npm = (args) => spawnSync(process.execPath, [npmCli, ...args], { stdio: 'inherit', env });
const steps = [
  ['install', '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
  ...(NATIVE_REBUILDS.length > 0 ? [['rebuild', ...NATIVE_REBUILDS, '--loglevel=error']] : []),
];
for (const args of steps) {
  const r = npm(args);
  if (r.status !== 0) {
    process.stderr.write(`postinstall: "npm ${args[0]}" under Node ${process.version} failed (exit ${r.status ?? r.signal})\n`);
    process.exit(1);
  }
}
