/**
 * @module The sustained open-loop rate of a server: the highest offered rate (wrk2, constant rate) at
 * which its p99 stays within `factor` × the ceiling's p99 at the same rate. A closed-loop maximum says
 * what a server answers when clients wait for it; this says what rate it holds at a sane tail. Each
 * step is judged by the rule of judged-pairs.ts (a missed first pair is run twice more, the medians
 * decide).
 */
import { judgedPairs } from './judged-pairs.ts';

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
 */
export async function sustainedRate(
  maxRps: number,
  fractions: readonly number[],
  factor: number,
  measure: (target: 'ours' | 'ceiling', rate: number) => Promise<number>,
  attempts = 3,
): Promise<SustainedRate> {
  const steps: RateStep[] = [];
  let best = 0;
  for (const f of fractions) {
    const rate = Math.round(f * maxRps);
    const judged = await judgedPairs(
      async () => {
        const ceiling = await measure('ceiling', rate);
        return { ceiling_p99_ms: ceiling, p99_ms: await measure('ours', rate), ours: null };
      },
      (ours, ceiling) => ours <= factor * ceiling,
      attempts,
    );
    const runs = judged.runs.map((r) => ({ p99_ms: r.p99_ms, ceiling_p99_ms: r.ceiling_p99_ms }));
    steps.push({ rate, p99_ms: judged.p99_ms, ceiling_p99_ms: judged.ceiling_p99_ms, ok: judged.ok, runs });
    if (!judged.ok) break;
    best = rate;
  }
  return { rate: best, steps };
}
