/**
 * @module The sustained open-loop rate of a server: the highest offered rate (wrk2, constant rate) at
 * which its p99 stays within `factor` × the ceiling's p99 at the same rate. A closed-loop maximum says
 * what a server answers when clients wait for it; this says what rate it holds at a sane tail.
 */

export interface RateStep {
  readonly rate: number;
  readonly p99_ms: number;
  readonly ceiling_p99_ms: number;
  readonly ok: boolean;
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
): Promise<SustainedRate> {
  const steps: RateStep[] = [];
  let best = 0;
  for (const f of fractions) {
    const rate = Math.round(f * maxRps);
    const ceiling = await measure('ceiling', rate);
    const ours = await measure('ours', rate);
    const ok = ours <= factor * ceiling;
    steps.push({ rate, p99_ms: ours, ceiling_p99_ms: ceiling, ok });
    if (!ok) break;
    best = rate;
  }
  return { rate: best, steps };
}
