#!/usr/bin/env node
// Completes package-lock.json with the other-platform binaries of optional dependencies.
//
// Why: the npm registry reachable from our machines lacks some per-platform packages (macOS,
// Windows, ARM builds of @uwsjs/* and @msgpackr-extract/*). npm 11 then leaves them out of the
// lockfile, and `npm ci` refuses the lockfile as out of sync. Each added entry carries the
// os/cpu constraints read from the package name, so `npm ci` skips it on Linux x64 and installs
// it where it exists. Run after every `npm install` that changes dependencies:
//   node .ci/complete-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const pkgs = lock.packages;
const OS = ['darwin', 'linux', 'win32'];
const CPU = ['arm64', 'x64', 'arm'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  return os !== undefined && cpu !== undefined ? { os, cpu } : null;
}

let added = 0;
for (const key of Object.keys(pkgs)) {
  const entry = pkgs[key];
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const platform = platformOf(dep);
    if (platform === null) continue;
    const nested = `${key === '' ? '' : `${key}/`}node_modules/${dep}`;
    const top = `node_modules/${dep}`;
    if (pkgs[nested]?.version === version || pkgs[top]?.version === version) continue;
    const at = pkgs[top] === undefined ? top : nested;
    if (pkgs[at] !== undefined) continue;
    pkgs[at] = { version, cpu: [platform.cpu], optional: true, os: [platform.os] };
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
lock.packages = sorted;
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`complete-lockfile: ${added} platform entr${added === 1 ? 'y' : 'ies'} added\n`);
