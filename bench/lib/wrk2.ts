/**
 * @module wrk2 (github.com/giltene/wrk2): the open-loop load generator of the latency runs. It sends
 * at a constant rate (`-R`) whatever the server's answers do, and measures each request from the time
 * it was due to be sent (the "corrected" latency: no coordinated omission); `-U` adds the latency from
 * the actual send ("uncorrected"). Debian has no package, so bench/tools/build-wrk2.sh builds it once
 * into `data/cache/tools/wrk2` (git-ignored; 20–40 s; it apt-installs build-essential, libssl-dev and
 * zlib1g-dev when missing) from the pinned tarball of `../shared/tools/build-wrk2.sh`, with one fix to
 * its event loop's timer wait (explained in the script: unfixed, every run lost its first second and
 * the generator could stall up to 1 s mid-run, which it counted as server latency). HPD_BENCH_WRK2
 * names another binary.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where the build goes; bin/test-prerequisites.js builds the same path before `npm test`. */
export const WRK2_DIR = join(ROOT, 'data/cache/tools');
/** Builds from the pinned tarball in ../shared/tools beside the repository. */
export const BUILD_SCRIPT = join(ROOT, 'bench/tools/build-wrk2.sh');

/** The wrk2 binary: HPD_BENCH_WRK2, else data/cache/tools/wrk2, built there when missing. */
export function ensureWrk2(log: (line: string) => void): string {
  const given = process.env.HPD_BENCH_WRK2;
  if (given !== undefined && given !== '') {
    if (!existsSync(given)) throw new Error(`HPD_BENCH_WRK2=${given}: no such file`);
    return given;
  }
  const bin = join(WRK2_DIR, 'wrk2');
  if (existsSync(bin)) return bin;
  log(`building wrk2 into ${dirname(bin)} (bench/tools/build-wrk2.sh, once; 20–40 s)`);
  const r = spawnSync('bash', [BUILD_SCRIPT, WRK2_DIR], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0 || !existsSync(bin))
    throw new Error(
      `building wrk2 failed (exit ${r.status}; or build github.com/giltene/wrk2 yourself and set HPD_BENCH_WRK2 to its binary): ${`${r.stdout}${r.stderr}`.trim().slice(-2000)}`,
    );
  return bin;
}

/** Latency percentiles in ms, as wrk2 prints them. */
export interface Wrk2Percentiles {
  readonly p50: number;
  readonly p75: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly p9999: number;
  readonly max: number;
}

export interface Wrk2Latency {
  /** From the time each request was due (wrk2's "Recorded Latency", corrected for coordinated omission). */
  readonly corrected: Wrk2Percentiles;
  /** From the time each request was actually sent (`-U`); null when wrk2 did not print it. */
  readonly uncorrected: Wrk2Percentiles | null;
}

/** wrk2's time units (units.c: values of ≥ 0.85 of the next unit are printed in it). */
const UNIT_MS: Readonly<Record<string, number>> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PERCENTILE_KEY: Readonly<Record<string, keyof Wrk2Percentiles>> = {
  '50.000': 'p50',
  '75.000': 'p75',
  '90.000': 'p90',
  '99.000': 'p99',
  '99.900': 'p999',
  '99.990': 'p9999',
  '100.000': 'max',
};

/** `1.23ms` → 1.23; `850.00us` → 0.85; `2.01s` → 2010; `1.50m` → 90,000. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(us|ms|s|m|h)$/.exec(text.trim());
  if (m === null) throw new Error(`not a wrk2 duration: "${text}"`);
  // Rounded to the nanosecond: 2.01 × 1000 is 2009.9999999999998 in binary floating point.
  return Math.round(Number(m[1]) * UNIT_MS[m[2]!]! * 1e6) / 1e6;
}

/**
 * The two "Latency Distribution (HdrHistogram - …)" blocks of `wrk2 --latency -U`: the recorded
 * (corrected) one, then the uncorrected one. Lines such as ` 99.900%    1.23ms`; the detailed spectrum
 * that follows each block is ignored.
 */
export function parseWrk2Latency(stdout: string): Wrk2Latency {
  const blocks: Array<{ title: string; values: Partial<Record<keyof Wrk2Percentiles, number>> }> = [];
  let current: (typeof blocks)[number] | null = null;
  for (const line of stdout.split('\n')) {
    const head = /Latency Distribution \(HdrHistogram - (.*)\)/.exec(line);
    if (head !== null) {
      current = { title: head[1]!, values: {} };
      blocks.push(current);
      continue;
    }
    if (current === null) continue;
    const row = /^\s*(\d+\.\d+)%\s+(\S+)\s*$/.exec(line);
    if (row === null) {
      if (/Detailed Percentile spectrum/.test(line)) current = null;
      continue;
    }
    const key = PERCENTILE_KEY[Number(row[1]).toFixed(3)];
    if (key !== undefined) current.values[key] = parseDuration(row[2]!);
  }
  const complete = (b: (typeof blocks)[number] | undefined): Wrk2Percentiles | null => {
    if (b === undefined) return null;
    const missing = Object.values(PERCENTILE_KEY).filter((k) => b.values[k] === undefined);
    if (missing.length > 0) throw new Error(`wrk2's "${b.title}" distribution lacks ${missing.join(', ')}`);
    return b.values as Wrk2Percentiles;
  };
  const corrected = complete(blocks.find((b) => b.title.startsWith('Recorded')));
  if (corrected === null) throw new Error(`no latency distribution in wrk2's output (was --latency given?): ${stdout.slice(0, 500)}`);
  return { corrected, uncorrected: complete(blocks.find((b) => b.title.startsWith('Uncorrected'))) };
}
