// Which test files each test script runs, decided in one place so that a new test file lands in the
// right set by its name and folder, never by a list someone forgets to edit:
//
//   real-data  `*.real-data.test.ts`: they compile the shared data's real plan years (seconds to a
//              minute each), so they run on their own, after the rest (`npm run test:real-data`).
//   fast       the units that need no server, no child process and no real data: the engine, the encoders, the
//              operations, the compiler, the docs checks and the hot path's writers (`npm run test:fast`).
//   units      everything but the real-data files (`npm test` runs units, then real-data).
//
// Usage: node bin/test-files.js fast|units|real-data   (prints the paths, one per line)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const REAL_DATA = /\.real-data\.test\.ts$/;
const FAST_FOLDERS = ['test/engine/', 'test/encoding/', 'test/operations/', 'test/build/', 'test/docs/'];
const FAST_FILES = /^test\/http\/[^/]*writer[^/]*\.test\.ts$/;
// A test that starts a process of its own (a build killed midway, a full disk, an hpd command) is not a unit.
const STARTS_PROCESSES = /\b(spawn|fork|execFile|runHpd)\(|spawnSync\(process\.execPath/;

function testFiles(dir) {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();
}

const all = testFiles('test');
const sets = {
  'real-data': all.filter((f) => REAL_DATA.test(f)),
  units: all.filter((f) => !REAL_DATA.test(f)),
  fast: all.filter(
    (f) =>
      !REAL_DATA.test(f) &&
      (FAST_FOLDERS.some((d) => f.startsWith(d)) || FAST_FILES.test(f)) &&
      !STARTS_PROCESSES.test(readFileSync(join(ROOT, f), 'utf8')),
  ),
};
const which = process.argv[2];
if (!(which in sets)) {
  process.stderr.write(`usage: node bin/test-files.js ${Object.keys(sets).join('|')}\n`);
  process.exit(2);
}
process.stdout.write(`${sets[which].join('\n')}\n`);
