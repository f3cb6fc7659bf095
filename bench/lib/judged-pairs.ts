/**
 * @module The rule bench:tail judges a tail figure by, ours against the ceiling: one pair of runs (the
 * ceiling, then ours); when that pair misses, two more pairs, and the medians of the three decide. A
 * shared virtual machine stalls now and then for tens of milliseconds, whoever runs on it (the ceiling
 * too): one such stall puts a run's p99 far out. With this rule one stall of the machine decides
 * nothing, and a server that misses two runs of three still misses.
 */
import { median } from './util.ts';

export interface JudgedPair<R> {
  /** Ours' p99 in this pair. */
  readonly p99_ms: number;
  readonly ceiling_p99_ms: number;
  /** Whatever else the caller keeps of ours' run (its GC counts…). */
  readonly ours: R;
}

export interface Judged<R> {
  /** The medians over the pairs run. */
  readonly p99_ms: number;
  readonly ceiling_p99_ms: number;
  readonly ok: boolean;
  /** Every pair, in the order run: one unless the first missed. */
  readonly runs: ReadonlyArray<JudgedPair<R>>;
}

/**
 * Runs `pair` once, and `attempts - 1` more times when `ok(ours, ceiling)` fails on it; `attempts` is
 * odd so that a median is one of the runs.
 */
export async function judgedPairs<R>(
  pair: () => Promise<JudgedPair<R>>,
  ok: (oursP99: number, ceilingP99: number) => boolean,
  attempts = 3,
): Promise<Judged<R>> {
  if (!Number.isInteger(attempts) || attempts < 1 || attempts % 2 === 0) throw new Error(`attempts must be an odd count, got ${attempts}`);
  const runs = [await pair()];
  if (!ok(runs[0]!.p99_ms, runs[0]!.ceiling_p99_ms)) while (runs.length < attempts) runs.push(await pair());
  const p99 = median(runs.map((r) => r.p99_ms));
  const ceiling = median(runs.map((r) => r.ceiling_p99_ms));
  return { p99_ms: p99, ceiling_p99_ms: ceiling, ok: ok(p99, ceiling), runs };
}

/** A judged figure's runs as text: `ours/ceiling` p99s, ms. */
export function runsText(
  runs: ReadonlyArray<{ readonly p99_ms: number; readonly ceiling_p99_ms: number }>,
  fmt: (n: number) => string,
): string {
  return runs.map((r) => `${fmt(r.p99_ms)}/${fmt(r.ceiling_p99_ms)}`).join(', ');
}
