/**
 * @module The sustained open-loop rate of a server: the highest offered rate (wrk2, constant rate) at
 * which its p99 stays within `factor` × the ceiling's p99 at the same rate. A closed-loop maximum says
 * what a server answers when clients wait for it; this says what rate it holds at a sane tail.
 *
 * A shared virtual machine stalls now and then for tens of milliseconds, whoever runs on it (the
 * ceiling too): one such stall in a 4 s run puts its p99 far out. A step that misses is therefore run
 * again, the ceiling and the server alternated, and judged on the medians of `attempts` pairs: a
 * stall of the machine decides nothing, a server that misses most of its runs still misses.
 */
import { median } from './util.ts';

export interface RateStep {
  readonly rate: number;
  /** The median of the server's p99s at this rate. */
  readonly p99_ms: number;
  /** The median of the ceiling's p99s at this rate. */
  readonly ceiling_p99_ms: number;
  readonly ok: boolean;
  /** Every run's p99, in the order run (one pair unless the first missed). */
  readonly runs: ReadonlyArray<{ readonly p99_ms: number; readonly ceiling_p99_ms: number }>;
}

export interface SustainedRate {
  /** Highest rate that passed; 0 when even the first step failed. */
  readonly rate: number;
  readonly steps: readonly RateStep[];
}

/**
 * Tries `fractions` of `maxRps` in order, the server and the ceiling alternated at each rate, and stops
 * at the first rate the server does not hold. `measure` runs one target at one rate and returns its p99.
 * A step that misses on its first pair is measured until it has `attempts` pairs (odd, so a median is
 * one of the runs) and then judged on the medians.
 */
export async function sustainedRate(
  maxRps: number,
  fractions: readonly number[],
  factor: number,
  measure: (target: 'ours' | 'ceiling', rate: number) => Promise<number>,
  attempts = 3,
): Promise<SustainedRate> {
  if (!Number.isInteger(attempts) || attempts < 1 || attempts % 2 === 0) throw new Error(`attempts must be an odd count, got ${attempts}`);
  const steps: RateStep[] = [];
  let best = 0;
  for (const f of fractions) {
    const rate = Math.round(f * maxRps);
    const runs: Array<{ p99_ms: number; ceiling_p99_ms: number }> = [];
    const pair = async (): Promise<void> => {
      const ceiling = await measure('ceiling', rate);
      runs.push({ ceiling_p99_ms: ceiling, p99_ms: await measure('ours', rate) });
    };
    await pair();
    if (runs[0]!.p99_ms > factor * runs[0]!.ceiling_p99_ms) while (runs.length < attempts) await pair();
    const ours = median(runs.map((r) => r.p99_ms));
    const ceiling = median(runs.map((r) => r.ceiling_p99_ms));
    const ok = ours <= factor * ceiling;
    steps.push({ rate, p99_ms: ours, ceiling_p99_ms: ceiling, ok, runs });
    if (!ok) break;
    best = rate;
  }
  return { rate: best, steps };
}
