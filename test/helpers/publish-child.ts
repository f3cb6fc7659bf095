/**
 * @module A child process for the kill-during-publication tests: runs the real `hpd build --force` code
 * path (buildDataset) on the fixture inputs and, after the publication step named in argv, announces
 * "paused <step>" on stdout and blocks so the parent can SIGKILL it exactly there.
 *
 * Usage: node --import ./bin/register-typescript.js test/helpers/publish-child.ts BUILDS_ROOT SOURCES_FILE STEP
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const [buildsRoot, sourcesFile, pauseAt] = process.argv.slice(2) as [string, string, string];
const blocker = new Int32Array(new SharedArrayBuffer(4));

await buildDataset({
  year: 2025,
  root: ROOT,
  buildsRoot,
  cacheDir: join(buildsRoot, '..', 'cache'),
  sourcesFile,
  offline: true,
  force: true,
  progress: createProgress({ tty: false, quiet: true }),
  publishHooks: {
    afterStep(step) {
      process.stdout.write(`step ${step}\n`);
      if (step !== pauseAt) return;
      process.stdout.write(`paused ${step}\n`);
      // Synchronous, so nothing else of the build runs until the parent's SIGKILL (bounded: 60 s).
      Atomics.wait(blocker, 0, 0, 60_000);
    },
  },
});
process.stdout.write('done\n');
