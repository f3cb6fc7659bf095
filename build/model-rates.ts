/**
 * @module Modeled Rate PUF rows, for plan years without a Rate PUF (every year, offline).
 *
 * No plan-level premium exists in the shared data, yet search, compare and OOP need one. The model
 * produces rows in the official Rate PUF format, `SourceName` = `MODELED`, which then compile through
 * the very loader a real Rate PUF uses. Everything downstream knows the premiums are modeled: the
 * manifest says so and every response carries `data_source` = `…+modeled_premiums`.
 *
 * For each individual medical plan and each rating area its service area covers:
 *
 *   price(age) = SLCSP benchmark of the state/area/year (0–14 normalised)
 *                × curve(age) / curve(0–14)        (the state's age curve, federal default otherwise)
 *                × metal factor                    (see METAL_FACTORS)
 *                × variation(plan)                 (deterministic, from a hash of the plan id, ±12 %)
 *
 * then the silver plans of each rating area are scaled so that the second-lowest benchmark-eligible
 * silver premium (on-exchange `-01`, not child-only) equals the benchmark exactly at every age; with one
 * such plan, that plan equals it. Because the SLCSP of a real Rate PUF is what the benchmark table
 * approximates, the subsidy arithmetic stays anchored to published figures even though each plan's
 * price is invented. NY and VT style community rating (family tiers) is modeled too: the benchmark is
 * the adult base rate and a `Family Option` row carries the tier premiums.
 */
import { createHash } from 'node:crypto';
import { AGE_BAND_COUNT, ageBandLabel } from '../src/engine/age-bands.ts';
import { ageCurveFor } from '../src/engine/rules.ts';
import type { TaxYearRules } from '../src/engine/rules-types.ts';
import type { MetalLevel, PlanVariantRecord } from '../src/engine/plan-record.ts';
import { benchmarkKey, type BenchmarkTable } from './benchmarks.ts';
import { RATE_PUF_HEADER } from './puf/rates.ts';
import { DIAGNOSTIC_CODES, type DiagnosticSink } from './read/diagnostics.ts';

/**
 * Premium relative to silver by metal level: actuarial value × HHS induced-demand factor, normalised to
 * silver (AV 0.70 × 1.03). Platinum 0.90 × 1.15, gold 0.80 × 1.08, expanded bronze 0.64 × 1.00,
 * bronze 0.60 × 1.00, catastrophic 0.57 × 1.00. A modeling choice, documented in the README.
 */
export const METAL_FACTORS: Readonly<Record<MetalLevel, number>> = {
  platinum: (0.9 * 1.15) / (0.7 * 1.03),
  gold: (0.8 * 1.08) / (0.7 * 1.03),
  silver: 1,
  'expanded bronze': (0.64 * 1.0) / (0.7 * 1.03),
  bronze: (0.6 * 1.0) / (0.7 * 1.03),
  catastrophic: (0.57 * 1.0) / (0.7 * 1.03),
};

/** Bands of ages under 21 (0–14, 15 … 20): the only ones a child-only plan is priced for. */
const CHILD_BANDS = 7;

/** Half-width of the per-plan variation. */
export const VARIATION = 0.12;

export const MODELED_SOURCE_NAME = 'MODELED';

/** Deterministic per-plan factor in [1 − VARIATION, 1 + VARIATION], from SHA-256 of the plan id. */
export function planVariation(standardComponentId: string): number {
  const h = createHash('sha256').update(standardComponentId).digest();
  const u = h.readUInt32BE(0) / 0x1_0000_0000;
  return 1 + VARIATION * (2 * u - 1);
}

export interface ModelPlan {
  readonly standardComponentId: string;
  readonly state: string;
  readonly issuerId: string;
  readonly metal: MetalLevel;
  /** Counts toward the benchmark: on-exchange `-01` variant exists and the plan is not child-only. */
  readonly benchmarkEligible: boolean;
  /** Child-only plans are sold to members under 21 only: no rates at adult ages, as in a real Rate PUF. */
  readonly childOnly: boolean;
  /** Rating areas its service area covers. */
  readonly areas: ReadonlySet<number>;
}

export interface ModelInput {
  readonly year: number;
  readonly plans: readonly ModelPlan[];
  readonly benchmarks: BenchmarkTable;
  readonly rules: TaxYearRules;
  /** ImportDate written on the rows: the freshness of the plan data the model prices. */
  readonly importDate: string;
}

/** Builds the model's plan list from plan variants (one entry per standard component id). */
export function modelPlans(variants: Iterable<PlanVariantRecord>, areasOf: (scid: string) => ReadonlySet<number>): ModelPlan[] {
  const byScid = new Map<string, { rec: PlanVariantRecord; eligible: boolean }>();
  for (const v of variants) {
    const cur = byScid.get(v.standard_component_id);
    const eligible = v.variant === '01' && !v.child_only;
    if (cur === undefined) byScid.set(v.standard_component_id, { rec: v, eligible });
    else if (eligible) cur.eligible = true;
  }
  return [...byScid.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([scid, { rec, eligible }]) => ({
      standardComponentId: scid,
      state: rec.state,
      issuerId: rec.issuer_id,
      metal: rec.metal_level,
      benchmarkEligible: eligible,
      childOnly: rec.child_only,
      areas: areasOf(scid),
    }));
}

interface AreaPlan {
  readonly plan: ModelPlan;
  readonly variation: number;
}

/**
 * Generates the modeled Rate PUF as CSV text chunks (header first). Rows are in plan id, then area,
 * then age order, like the official file.
 */
export function* modeledRatePufCsv(input: ModelInput, sink: DiagnosticSink): Generator<string> {
  const { year, rules } = input;
  // Group plans by state and area so silver scaling sees every plan priced in the area.
  const byArea = new Map<string, AreaPlan[]>();
  for (const plan of input.plans) {
    const variation = planVariation(plan.standardComponentId);
    for (const area of plan.areas) {
      const key = benchmarkKey(plan.state, area);
      let list = byArea.get(key);
      if (list === undefined) byArea.set(key, (list = []));
      list.push({ plan, variation });
    }
  }
  // Per plan and area: the factor applied to the area's age-rated benchmark.
  const factor = new Map<string, number>();
  const benchByArea = new Map<string, number>();
  for (const [key, list] of byArea) {
    const [state, areaText] = key.split(':') as [string, string];
    const bench = benchmarkFor(input.benchmarks, state, Number(areaText), sink);
    if (bench === null) continue;
    benchByArea.set(key, bench);
    const eligibleSilver = list
      .filter((p) => p.plan.metal === 'silver' && p.plan.benchmarkEligible)
      .sort((a, b) => a.variation - b.variation);
    // The benchmark plan's own factor is exactly 1, so its rate is the rounded benchmark itself.
    const anchor = eligibleSilver.length === 0 ? null : (eligibleSilver[1] ?? eligibleSilver[0]!).variation;
    for (const p of list) {
      const f = p.plan.metal === 'silver' && anchor !== null ? p.variation / anchor : METAL_FACTORS[p.plan.metal] * p.variation;
      factor.set(`${p.plan.standardComponentId}:${key}`, f);
    }
  }

  yield `${RATE_PUF_HEADER.join(',')}\n`;
  const effective = `${year}-01-01`;
  const expiration = `${year}-12-31`;
  let chunk = '';
  for (const plan of input.plans) {
    const curve = ageCurveFor(rules, plan.state).factors;
    const tiers = rules.family_tiers[plan.state];
    // Community-rated states: the benchmark is the adult base rate (curve index 7 = age 21).
    const base = tiers !== undefined ? curve[7]! : curve[0]!;
    const areas = [...plan.areas].sort((a, b) => a - b);
    for (const area of areas) {
      const key = benchmarkKey(plan.state, area);
      const bench = benchByArea.get(key);
      const f = factor.get(`${plan.standardComponentId}:${key}`);
      if (bench === undefined || f === undefined) continue;
      const prefix = `${year},${plan.state},${plan.issuerId},${MODELED_SOURCE_NAME},${input.importDate},${effective},${expiration},${plan.standardComponentId},Rating Area ${area},No Preference,`;
      const bands = plan.childOnly ? CHILD_BANDS : AGE_BAND_COUNT;
      for (let b = 0; b < bands; b++) {
        const ageRated = round2((bench * curve[b]!) / base);
        const rate = f === 1 ? ageRated : round2(ageRated * f);
        chunk += `${prefix}${ageBandLabel(b)},${rate.toFixed(2)},,,,,,,,\n`;
      }
      if (tiers !== undefined) {
        const adult = round2(bench * f);
        const t = (x: number | null): string => (x === null ? '' : round2(adult * x).toFixed(2));
        chunk +=
          `${prefix}Family Option,${adult.toFixed(2)},,${t(tiers.two_adults)},${t(tiers.one_adult_and_children)},` +
          `${t(tiers.one_adult_and_children)},${t(tiers.one_adult_and_children)},${t(tiers.two_adults_and_children)},` +
          `${t(tiers.two_adults_and_children)},${t(tiers.two_adults_and_children)}\n`;
      }
      if (chunk.length > 1 << 16) {
        yield chunk;
        chunk = '';
      }
    }
  }
  if (chunk !== '') yield chunk;
}

/** Age-rated benchmark of an area at every band, in dollars (what the modeled SLCSP equals). */
export function benchmarkByBand(bench: number, curve: readonly number[], communityRated: boolean): number[] {
  const base = communityRated ? curve[7]! : curve[0]!;
  return Array.from({ length: AGE_BAND_COUNT }, (_, b) => round2((bench * curve[b]!) / base));
}

/**
 * The benchmark of an area; an area missing from the table (FL 22, SC 9, SC 19) takes the median of
 * its state's areas, with a warning, rather than leaving plans unpriced.
 */
export function benchmarkFor(table: BenchmarkTable, state: string, area: number, sink: DiagnosticSink, warn = true): number | null {
  const v = table.get(benchmarkKey(state, area));
  if (v !== undefined) return v;
  const values = [...table.entries()]
    .filter(([k]) => k.startsWith(`${state}:`))
    .map(([, x]) => x)
    .sort((a, b) => a - b);
  if (values.length === 0) {
    if (warn)
      sink.warn({
        file: 'benchmarks',
        line: 0,
        column: 0,
        value: `${state} ${area}`,
        code: DIAGNOSTIC_CODES.model,
        reason: 'no SLCSP benchmark for the state; its plans are not priced',
      });
    return null;
  }
  const median = values[Math.floor((values.length - 1) / 2)]!;
  if (warn) {
    sink.warn({
      file: 'benchmarks',
      line: 0,
      column: 0,
      value: `${state} Rating Area ${area}`,
      code: DIAGNOSTIC_CODES.model,
      reason: `no SLCSP benchmark for this rating area; modeled from the state median ${median.toFixed(2)}`,
    });
  }
  return median;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
