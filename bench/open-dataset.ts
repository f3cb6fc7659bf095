/**
 * @module Child process of the build benchmark: opens the current build of a year in a fresh process
 * and reports the open time and the resident memory, so the numbers are not polluted by the compiler's
 * heap. Prints one JSON line.
 */
import { openCurrentDataset } from '../src/engine/dataset.ts';

const [buildsRoot, yearText] = process.argv.slice(2);
if (buildsRoot === undefined || yearText === undefined) {
  process.stderr.write('usage: open-dataset.ts BUILDS_ROOT YEAR\n');
  process.exit(2);
}
const rssBefore = process.memoryUsage().rss;
const t0 = performance.now();
const ds = openCurrentDataset(buildsRoot, Number(yearText));
const openMs = performance.now() - t0;
// Touch what a serving process touches: resolve every ZIP and read every plan list's premium order.
let locations = 0;
const t1 = performance.now();
for (let z = 0; z < 100_000; z++) {
  const locs = ds.resolveZip(String(z).padStart(5, '0'));
  if (locs === null) continue;
  for (const l of locs) {
    locations++;
    if (ds.listSize(l.listId) > 0) ds.listOrder(l.listId, 'premium', 40);
  }
}
const sweepMs = performance.now() - t1;
let details = 0;
for (const scid of ds.planIds()) if (ds.planRecord(`${scid}-01`) !== undefined) details++;
const rss = process.memoryUsage().rss;
process.stdout.write(
  `${JSON.stringify({ open_ms: openMs, sweep_ms: sweepMs, locations, plan_details: details, rss_bytes: rss, rss_before_open_bytes: rssBefore, table_bytes: ds.tableBytes, heap_used_bytes: process.memoryUsage().heapUsed })}\n`,
);
ds.close();
