/**
 * @module The build's CSV parser (build/read/csv-reader.ts) on real CMS files: the
 * PY2025 Plan Attributes PUF (35.5 MB, 151 columns, inflated once into a temporary file) and the PY2025
 * Service Area PUF (1.2 MB), read from disk in 64 KiB chunks as the build reads plain files, every
 * record with its physical line number.
 *
 * csv-parse (the usual Node CSV library) is not a dependency: `HPD_CSV_PARSE` names its ESM entry
 * (e.g. after `cd /tmp/c && npm i csv-parse`: HPD_CSV_PARSE=/tmp/c/node_modules/csv-parse/lib/index.js)
 * to time it on the same files with `info: true`, which gives each record its line. Without it only ours runs.
 * Run: `node --import ./bin/register-typescript.js bench/csv-reader.bench.ts`.
 */
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Bench } from 'tinybench';
import { csvRecords } from '../build/read/csv-reader.ts';
import { openZipCsv } from '../build/read/zip-entry.ts';
import { REPO_ROOT } from '../src/cli/paths.ts';
import { cpuTimer } from './lib/cpu-timer.ts';

const { timed, cpuMs } = cpuTimer();

const DATA = join(REPO_ROOT, '..', 'shared', 'data', 'cms', 'py2025');
const CHUNK = 1 << 16;

type CsvParse = (opts: Record<string, unknown>) => NodeJS.ReadWriteStream & AsyncIterable<unknown>;
const libPath = process.env.HPD_CSV_PARSE;
const parse = libPath === undefined ? null : ((await import(libPath)) as { parse: CsvParse }).parse;

const tmp = mkdtempSync(join(tmpdir(), 'hpd-csv-bench-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const planAttributes = join(tmp, 'plan-attributes-puf.csv');
await pipeline((await openZipCsv(join(DATA, 'plan-attributes-puf.zip'))).stream, createWriteStream(planAttributes));
const files = [planAttributes, join(DATA, 'service-area-puf.csv')];

/** Records read (the header included) and the line the last one starts on. */
async function ours(file: string): Promise<[number, number]> {
  let n = 0;
  let line = 0;
  for await (const batch of csvRecords(createReadStream(file, { highWaterMark: CHUNK }))) {
    n += batch.length;
    line = batch.at(-1)?.line ?? line;
  }
  return [n, line];
}

async function library(p: CsvParse, file: string): Promise<[number, number]> {
  let n = 0;
  let line = 0;
  const parser = createReadStream(file, { highWaterMark: CHUNK }).pipe(p({ info: true, bom: true, relax_column_count: true }));
  for await (const r of parser as AsyncIterable<{ info: { lines: number } }>) {
    n++;
    line = r.info.lines;
  }
  return [n, line];
}

for (const f of files)
  console.log(f.split('/').at(-1), 'ours', await ours(f), parse === null ? '' : `csv-parse ${String(await library(parse, f))}`);
const bench = new Bench({ time: Number(process.env.HPD_BENCH_MS ?? 5000), iterations: 10, warmupIterations: 2 });
for (const f of files) {
  const name = f.split('/').at(-1);
  bench.add(
    `ours      ${name}`,
    timed(`ours      ${name}`, () => ours(f)),
  );
  if (parse !== null)
    bench.add(
      `csv-parse ${name}`,
      timed(`csv-parse ${name}`, () => library(parse, f)),
    );
}
await bench.run();
console.table(
  bench.tasks.map((t) => {
    const r = t.result as unknown as { latency: { p50: number } };
    const file = files.find((f) => t.name.endsWith(f.split('/').at(-1) ?? ''));
    const mb = statSync(file ?? '').size / 1e6;
    return {
      task: t.name,
      'median ms': +r.latency.p50.toFixed(1),
      'MB/s (median)': Math.round(mb / (r.latency.p50 / 1000)),
      'CPU ms/run': cpuMs(t.name),
      'MB/s of CPU': Math.round(mb / (cpuMs(t.name) / 1000)),
    };
  }),
);
