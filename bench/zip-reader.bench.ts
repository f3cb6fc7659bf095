/**
 * @module The build's ZIP reader (build/read/zip-entry.ts) against yauzl, the usual Node ZIP library,
 * on the real CMS Plan Attributes PUFs: open the archive, find the one CSV member and
 * stream its inflated bytes to the end, which is all the compiler asks of a ZIP reader. yauzl is timed
 * twice: as documented (its own inflate stream) and tuned (raw member bytes through a 64 KiB inflate,
 * our chunk size); both check the CRC-32 as ours does, since yauzl checks only sizes.
 *
 * Before timing, both read a copy of the first file with one byte of its deflate data flipped, to show
 * which one notices (the compiler must fail on a corrupt download, not build from it).
 *
 * yauzl is not a dependency: `HPD_YAUZL` names its entry file (e.g. after
 * `cd /tmp/y && npm i yauzl`: HPD_YAUZL=/tmp/y/node_modules/yauzl/index.js); without it only ours runs.
 * Run: `node --import ./bin/register-typescript.js bench/zip-reader.bench.ts [zip ...]`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { Bench } from 'tinybench';
import { openZipCsv } from '../build/read/zip-entry.ts';
import { REPO_ROOT } from '../src/cli/paths.ts';
import { cpuTimer } from './lib/cpu-timer.ts';

const { timed, cpuMs } = cpuTimer();

const DATA = join(REPO_ROOT, '..', 'shared', 'data', 'cms');
const files =
  process.argv.slice(2).length > 0
    ? process.argv.slice(2)
    : [join(DATA, 'py2025', 'plan-attributes-puf.zip'), join(DATA, 'py2023', 'plan-attributes-puf.zip')];

/** The slice of yauzl's callback API used here. */
interface YauzlEntry {
  readonly fileName: string;
  readonly crc32: number;
}
interface YauzlZip {
  on(event: 'entry', cb: (e: YauzlEntry) => void): void;
  on(event: 'end' | 'error', cb: (err?: Error) => void): void;
  readEntry(): void;
  openReadStream(e: YauzlEntry, opts: { decompress: boolean }, cb: (err: Error | null, s: NodeJS.ReadableStream) => void): void;
}
interface Yauzl {
  open(path: string, opts: { lazyEntries: boolean; autoClose: boolean }, cb: (err: Error | null, zip: YauzlZip) => void): void;
}

const yauzlPath = process.env.HPD_YAUZL;
const yauzl = yauzlPath === undefined ? null : ((await import(yauzlPath)) as { default: Yauzl }).default;

async function drainOurs(file: string): Promise<number> {
  const z = await openZipCsv(file);
  let n = 0;
  for await (const c of z.stream) n += c.length;
  return n;
}

/** Streams the CSV member with yauzl; `tuned` inflates the raw bytes with 64 KiB chunks; the CRC check is ours. */
function drainYauzl(y: Yauzl, file: string, tuned: boolean, checkCrc = true): Promise<number> {
  return new Promise((resolve, reject) => {
    y.open(file, { lazyEntries: true, autoClose: true }, (err, zip) => {
      if (err !== null) return reject(err);
      zip.on('error', reject);
      zip.on('entry', (e) => {
        if (!e.fileName.toLowerCase().endsWith('.csv')) return zip.readEntry();
        zip.openReadStream(e, { decompress: !tuned }, (err2, raw) => {
          if (err2 !== null) return reject(err2);
          const stream = tuned ? raw.pipe(zlib.createInflateRaw({ chunkSize: 1 << 16 })) : raw;
          consume(stream as AsyncIterable<Buffer>, checkCrc ? e.crc32 : null).then(resolve, reject);
        });
      });
      zip.readEntry();
    });
  });
}

async function consume(stream: AsyncIterable<Buffer>, crc32: number | null): Promise<number> {
  let n = 0;
  let crc = 0;
  for await (const c of stream) {
    n += c.length;
    crc = zlib.crc32(c, crc);
  }
  if (crc32 !== null && crc >>> 0 !== crc32 >>> 0) throw new Error('CRC-32 mismatch');
  return n;
}

/**
 * What each reader says about a copy of `file` with byte 500,000 flipped: inside the deflate data of the
 * PY2025 file, and a flip that keeps the inflated size, so only a CRC-32 check can notice it.
 */
async function corruptCopyVerdicts(file: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-zip-bench-'));
  const copy = join(dir, 'flipped.zip');
  const bytes = readFileSync(file);
  bytes[500_000] ^= 0xff;
  writeFileSync(copy, bytes);
  const verdict = (p: Promise<unknown>): Promise<string> =>
    p.then(
      () => 'read to the end without an error',
      (err: Error) => err.message,
    );
  console.log(`ours on a flipped byte:  ${await verdict(drainOurs(copy))}`);
  // The yauzl drain checks the CRC itself; the documented use without that check is what yauzl alone reports.
  if (yauzl !== null) console.log(`yauzl on a flipped byte: ${await verdict(drainYauzl(yauzl, copy, false, false))}`);
  rmSync(dir, { recursive: true, force: true });
}

await corruptCopyVerdicts(files[0] ?? '');
const sizes = new Map<string, number>();
for (const f of files) sizes.set(f, await drainOurs(f));
const bench = new Bench({ time: Number(process.env.HPD_BENCH_MS ?? 5000), iterations: 10, warmupIterations: 3 });
for (const f of files) {
  const short = f.split('/').slice(-2).join('/');
  bench.add(
    `ours  ${short}`,
    timed(`ours  ${short}`, () => drainOurs(f)),
  );
  if (yauzl !== null) {
    bench.add(
      `yauzl ${short}`,
      timed(`yauzl ${short}`, () => drainYauzl(yauzl, f, false)),
    );
    bench.add(
      `yauzl+64k inflate ${short}`,
      timed(`yauzl+64k inflate ${short}`, () => drainYauzl(yauzl, f, true)),
    );
  }
}
await bench.run();
console.table(
  bench.tasks.map((t) => {
    const r = t.result as unknown as { latency: { p50: number; mean: number }; totalTime: number };
    const file = files.find((f) => t.name.endsWith(f.split('/').slice(-2).join('/')))!;
    return {
      task: t.name,
      'median ms': +r.latency.p50.toFixed(1),
      'MB/s (median)': Math.round(sizes.get(file)! / 1e6 / (r.latency.p50 / 1000)),
      'CPU ms/run': cpuMs(t.name),
      'MB/s of CPU': Math.round(sizes.get(file)! / 1e6 / (cpuMs(t.name) / 1000)),
    };
  }),
);
