/**
 * @module SLCSP per rating area and age band: the second-lowest silver premium of the build where the
 * state has plan data, else the benchmark table (an approximation, flagged by its source code).
 */
import { AGE_BAND_COUNT } from '../../src/engine/age-bands.ts';
import { METAL_CODES, PLAN_FLAG, SLCSP_SOURCE } from '../../src/engine/build-format.ts';
import { ageCurveFor } from '../../src/engine/rules.ts';
import type { TaxYearRules } from '../../src/engine/rules-types.ts';
import type { BenchmarkTable } from '../benchmarks.ts';
import { benchmarkByBand, benchmarkFor } from '../model-rates.ts';
import type { DiagnosticSink } from '../read/diagnostics.ts';
import type { AreaIndex } from './area-index.ts';
import type { PlanColumns } from './plan-columns.ts';
import type { PremiumPairs } from './premium-pairs.ts';

export interface SlcspTable {
  readonly cents: Uint32Array;
  readonly source: Uint8Array;
}

export interface SlcspInput {
  readonly areas: AreaIndex;
  readonly plans: PlanColumns;
  readonly pairs: PremiumPairs;
  readonly statesWithPlans: ReadonlySet<string>;
  readonly benchmarks: BenchmarkTable;
  readonly rules: TaxYearRules;
  readonly modeledStates: ReadonlySet<string>;
  readonly sink: DiagnosticSink;
}

export function slcspTable(s: SlcspInput): SlcspTable {
  const { areas, plans, pairs } = s;
  const nA = areas.count;
  const cents = new Uint32Array(nA * AGE_BAND_COUNT);
  const source = new Uint8Array(nA);
  // Silver, on-exchange, not child-only pairs by area: the candidates for the benchmark plan.
  const silverByArea = new Map<number, number[]>();
  for (let i = 0; i < pairs.plan.length; i++) {
    const p = pairs.plan[i]!;
    if (
      METAL_CODES[plans.metal[p]!] !== 'silver' ||
      (plans.flags[p]! & PLAN_FLAG.onExchange) === 0 ||
      (plans.flags[p]! & PLAN_FLAG.childOnly) !== 0
    )
      continue;
    let l = silverByArea.get(pairs.area[i]!);
    if (l === undefined) silverByArea.set(pairs.area[i]!, (l = []));
    l.push(i);
  }
  for (let ai = 0; ai < nA; ai++) {
    const [state, n] = areas.keys[ai]!;
    const silver = silverByArea.get(ai);
    if (silver !== undefined && silver.length > 0) {
      for (let b = 0; b < AGE_BAND_COUNT; b++) {
        const values = silver
          .map((i) => pairs.cents[i * AGE_BAND_COUNT + b]!)
          .filter((c) => c > 0)
          .sort((x, y) => x - y);
        if (values.length > 0) cents[ai * AGE_BAND_COUNT + b] = values[1] ?? values[0]!;
      }
      source[ai] = s.modeledStates.has(state) ? SLCSP_SOURCE.modeled : SLCSP_SOURCE.ratePuf;
      continue;
    }
    if (s.statesWithPlans.has(state)) continue; // plan data but no silver plan here: no benchmark to give
    const bench = benchmarkFor(s.benchmarks, state, n, s.sink, false);
    if (bench === null) continue;
    const community = s.rules.family_tiers[state] !== undefined;
    const byBand = benchmarkByBand(bench, ageCurveFor(s.rules, state).factors, community);
    for (const [b, v] of byBand.entries()) cents[ai * AGE_BAND_COUNT + b] = Math.round(v * 100);
    source[ai] = SLCSP_SOURCE.benchmarkOnly;
  }
  return { cents, source };
}
