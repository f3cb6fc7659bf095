/**
 * @module What changes between two builds: plans added, removed and changed (per state and issuer),
 * the distribution of premium changes per metal level, ZIPs and counties whose rating areas changed,
 * and the SLCSP of every rating area. Pure: it reads two opened {@link Dataset}s and returns a typed
 * object; the CLI renders it (src/cli/build-diff-text.ts) or prints it as JSON.
 *
 * Operators run this before switching `current` to a build made from new files, so it must be cheap on
 * the national build: every query is one of the engine's in-memory lookups except one LMDB read per plan
 * (the links), and premiums are compared at three ages (21, 40, 64), not all 51 bands — a change that
 * shows at none of them is very unlikely from a real Rate PUF and impossible from the model.
 */
import { PLAN_FLAG } from './build-format.ts';
import type { Dataset, PlanSummaryFields } from './dataset.ts';
import { METAL_LEVELS, type MetalLevel, type PlanVariantRecord } from './plan-record.ts';

/** Ages at which premiums are compared; distributions are reported for each, the text shows 40. */
export const DIFF_AGES = [21, 40, 64] as const;
/** Age of the SLCSP comparison (the API's reference adult). */
export const SLCSP_AGE = 40;

/** Fields of a plan that make it "changed"; `premium` and `rating_areas` come from the premium table. */
export type PlanField =
  | 'name'
  | 'issuer'
  | 'metal'
  | 'type'
  | 'deductible'
  | 'max_oop'
  | 'hsa_eligible'
  | 'on_exchange'
  | 'child_only'
  | 'national_network'
  | 'links'
  | 'premium'
  | 'rating_areas';

export interface DiffBuildRef {
  readonly year: number;
  readonly hash: string;
  readonly built_at: string;
  readonly data_source: string;
}

export interface PlanGroupDiff {
  readonly before: number;
  readonly after: number;
  readonly added: number;
  readonly removed: number;
  readonly changed: number;
}

export interface StatePlanDiff extends PlanGroupDiff {
  readonly state: string;
  /** Plan variants (`-00`, `-01`, CSR …) from the manifests: counted, not compared one by one. */
  readonly variants_before: number;
  readonly variants_after: number;
}

export interface IssuerPlanDiff extends PlanGroupDiff {
  readonly state: string;
  readonly issuer_id: string;
  /** Name in the newer build (B), else in A. */
  readonly issuer: string;
}

export interface ChangedPlan {
  readonly id: string;
  readonly state: string;
  readonly issuer: string;
  readonly fields: readonly PlanField[];
}

/** Relative premium change (after / before − 1) over every (plan, rating area) priced in both builds. */
export interface PremiumDistribution {
  readonly metal: MetalLevel;
  readonly age: number;
  readonly count: number;
  readonly increased: number;
  readonly decreased: number;
  readonly unchanged: number;
  /** Percentiles by linear interpolation between closest ranks (type 7); null when count is 0. */
  readonly median: number | null;
  readonly p10: number | null;
  readonly p90: number | null;
}

/** A location as `county FIPS:rating area`, e.g. `48201:10`. */
export type LocationKey = string;

export interface ZipChange {
  readonly zip: string;
  readonly state: string;
  /** Sorted; empty when the ZIP is absent from that build. */
  readonly before: readonly LocationKey[];
  readonly after: readonly LocationKey[];
}

export interface CountyChange {
  readonly fips: string;
  readonly state: string;
  readonly name: string;
  readonly before: readonly number[];
  readonly after: readonly number[];
}

export interface SlcspChange {
  readonly state: string;
  readonly rating_area: number;
  /** Monthly dollars at {@link SLCSP_AGE}; null when the build has no SLCSP there. */
  readonly before: number | null;
  readonly after: number | null;
  /** after − before in dollars; null unless both exist. */
  readonly change: number | null;
  /** after / before − 1; null unless both exist. */
  readonly relative: number | null;
}

export interface BuildDiff {
  readonly a: DiffBuildRef;
  readonly b: DiffBuildRef;
  /** Builds of two plan years: plan ids are compared as they are, although issuers renumber plans yearly. */
  readonly cross_year: boolean;
  readonly plans: {
    readonly total: PlanGroupDiff & { readonly unchanged: number; readonly variants_before: number; readonly variants_after: number };
    readonly by_state: readonly StatePlanDiff[];
    readonly by_issuer: readonly IssuerPlanDiff[];
    readonly added: readonly string[];
    readonly removed: readonly string[];
    readonly changed: readonly ChangedPlan[];
    /** How often each field differed among changed plans. */
    readonly changed_fields: Readonly<Partial<Record<PlanField, number>>>;
  };
  readonly premiums: { readonly ages: readonly number[]; readonly distributions: readonly PremiumDistribution[] };
  readonly zips: { readonly before: number; readonly after: number; readonly changed: readonly ZipChange[] };
  readonly counties: { readonly before: number; readonly after: number; readonly changed: readonly CountyChange[] };
  readonly slcsp: { readonly age: number; readonly changed: number; readonly unchanged: number; readonly areas: readonly SlcspChange[] };
  readonly seconds: number;
}

interface Geography {
  readonly zips: Map<string, { state: string; keys: LocationKey[] }>;
  /** state → rating areas with at least one location. */
  readonly areas: Map<string, Set<number>>;
  /** county FIPS → state. */
  readonly counties: Map<string, string>;
}

function geography(ds: Dataset): Geography {
  const zips = new Map<string, { state: string; keys: LocationKey[] }>();
  const areas = new Map<string, Set<number>>();
  const counties = new Map<string, string>();
  for (let z = 0; z < 100_000; z++) {
    const zip = String(z).padStart(5, '0');
    const locs = ds.resolveZip(zip);
    if (locs === null) continue;
    const keys: LocationKey[] = [];
    for (const l of locs) {
      keys.push(`${l.countyFips}:${l.ratingArea}`);
      let set = areas.get(l.state);
      if (set === undefined) areas.set(l.state, (set = new Set()));
      set.add(l.ratingArea);
      counties.set(l.countyFips, l.state);
    }
    zips.set(zip, { state: locs[0]!.state, keys: keys.sort() });
  }
  return { zips, areas, counties };
}

const FLAG_FIELDS: ReadonlyArray<[PlanField, number]> = [
  ['hsa_eligible', PLAN_FLAG.hsaEligible],
  ['on_exchange', PLAN_FLAG.onExchange],
  ['child_only', PLAN_FLAG.childOnly],
  ['national_network', PLAN_FLAG.nationalNetwork],
];

function summaryFields(a: PlanSummaryFields, b: PlanSummaryFields): PlanField[] {
  const out: PlanField[] = [];
  if (a.name !== b.name) out.push('name');
  if (a.issuer !== b.issuer || a.issuerId !== b.issuerId) out.push('issuer');
  if (a.metal !== b.metal) out.push('metal');
  if (a.planType !== b.planType) out.push('type');
  if (a.deductible !== b.deductible) out.push('deductible');
  if (a.maxOutOfPocket !== b.maxOutOfPocket) out.push('max_oop');
  for (const [field, bit] of FLAG_FIELDS) if ((a.flags & bit) !== (b.flags & bit)) out.push(field);
  return out;
}

/** The record the summary describes: the on-exchange `-01` variant, else the off-exchange `-00`. */
function primaryRecord(ds: Dataset, scid: string): PlanVariantRecord | undefined {
  return ds.planRecord(`${scid}-01`) ?? ds.planRecord(`${scid}-00`);
}

function sameLinks(a: PlanVariantRecord | undefined, b: PlanVariantRecord | undefined): boolean {
  const la = a?.links;
  const lb = b?.links;
  if (la === undefined || lb === undefined) return la === lb;
  return (
    la.benefits_summary === lb.benefits_summary &&
    la.brochure === lb.brochure &&
    la.formulary === lb.formulary &&
    la.provider_directory === lb.provider_directory
  );
}

/** Percentile of sorted values, linear interpolation between closest ranks (R type 7, numpy default). */
export function percentile(sorted: ArrayLike<number>, q: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/** Relative values are rounded to 1e-6: cents make anything finer noise, and JSON stays readable. */
const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;
const roundCents = (x: number): number => Math.round(x * 100) / 100;

function ref(ds: Dataset): DiffBuildRef {
  return { year: ds.year, hash: ds.buildHash, built_at: ds.manifest.built_at, data_source: ds.manifest.data_source };
}

type Group = { before: number; after: number; added: number; removed: number; changed: number };
type IssuerGroup = Group & { state: string; issuer_id: string; issuer: string };

function emptyGroup(): Group {
  return { before: 0, after: 0, added: 0, removed: 0, changed: 0 };
}

/** Compares build `a` (before) with build `b` (after). */
export function diffBuilds(a: Dataset, b: Dataset): BuildDiff {
  const started = performance.now();
  const geoA = geography(a);
  const geoB = geography(b);
  const plans = comparePlans(a, b, geoA, geoB);
  const { added, changed } = plans;
  const slcspAreas = slcspChanges(a, b, geoA, geoB);
  const slcspChanged = slcspAreas.filter((s) => s.before !== s.after).length;
  const total = {
    before: plans.countA,
    after: plans.countB,
    added: added.length,
    removed: plans.removed.length,
    changed: changed.length,
    unchanged: plans.countB - added.length - changed.length,
    variants_before: a.manifest.counts.plan_variants,
    variants_after: b.manifest.counts.plan_variants,
  };
  const variants = (ds: Dataset, state: string): number => ds.manifest.states[state]?.variants ?? 0;
  const by_state: StatePlanDiff[] = [...plans.byState.entries()]
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([state, g]) => ({ state, ...g, variants_before: variants(a, state), variants_after: variants(b, state) }));
  const by_issuer: IssuerPlanDiff[] = [...plans.byIssuer.values()].sort(
    (x, y) => x.state.localeCompare(y.state) || x.issuer_id.localeCompare(y.issuer_id),
  );
  return {
    a: ref(a),
    b: ref(b),
    cross_year: a.year !== b.year,
    plans: { total, by_state, by_issuer, added: added.sort(), removed: plans.removed.sort(), changed, changed_fields: plans.changedFields },
    premiums: { ages: DIFF_AGES, distributions: premiumDistributions(plans.relative) },
    zips: { before: geoA.zips.size, after: geoB.zips.size, changed: zipChanges(geoA, geoB) },
    counties: { before: geoA.counties.size, after: geoB.counties.size, changed: countyChanges(a, b, geoA, geoB) },
    slcsp: { age: SLCSP_AGE, changed: slcspChanged, unchanged: slcspAreas.length - slcspChanged, areas: slcspAreas },
    seconds: (performance.now() - started) / 1000,
  };
}

interface PlanComparison {
  readonly countA: number;
  readonly countB: number;
  readonly byState: Map<string, Group>;
  /** Keyed by state and issuer id, in first-seen order. */
  readonly byIssuer: Map<string, IssuerGroup>;
  readonly added: string[];
  readonly removed: string[];
  readonly changed: ChangedPlan[];
  readonly changedFields: Partial<Record<PlanField, number>>;
  /** `${metal}|${age}` → relative premium changes of the plans in both builds. */
  readonly relative: Map<string, number[]>;
}

/** Plans of A, then of B: counted per state and issuer, and compared when in both. */
function comparePlans(a: Dataset, b: Dataset, geoA: Geography, geoB: Geography): PlanComparison {
  const idsA = a.planIds();
  const idsB = b.planIds();
  const inA = new Set(idsA);
  const inB = new Set(idsB);
  const out: PlanComparison = {
    countA: idsA.length,
    countB: idsB.length,
    byState: new Map(),
    byIssuer: new Map(),
    added: [],
    removed: [],
    changed: [],
    changedFields: {},
    relative: new Map(),
  };
  const groups = (p: PlanSummaryFields): [Group, IssuerGroup] => {
    let g = out.byState.get(p.state);
    if (g === undefined) out.byState.set(p.state, (g = emptyGroup()));
    const key = `${p.state}\u0000${p.issuerId}`;
    let ig = out.byIssuer.get(key);
    if (ig === undefined) out.byIssuer.set(key, (ig = { ...emptyGroup(), state: p.state, issuer_id: p.issuerId, issuer: p.issuer }));
    else ig.issuer = p.issuer; // B is visited last: its name wins
    return [g, ig];
  };
  const count = (p: PlanSummaryFields, field: keyof Group): void => {
    for (const g of groups(p)) g[field]++;
  };

  for (const id of idsA) {
    const p = a.plan(a.planIndex(id)!);
    count(p, 'before');
    if (!inB.has(id)) {
      out.removed.push(id);
      count(p, 'removed');
    }
  }
  for (const id of idsB) {
    const pb = b.plan(b.planIndex(id)!);
    count(pb, 'after');
    if (!inA.has(id)) {
      out.added.push(id);
      count(pb, 'added');
      continue;
    }
    const pa = a.plan(a.planIndex(id)!);
    const fields = summaryFields(pa, pb);
    if (!sameLinks(primaryRecord(a, id), primaryRecord(b, id))) fields.push('links');
    // Premiums in every rating area either build has for the plan's state.
    const areas = new Set([...(geoA.areas.get(pa.state) ?? []), ...(geoB.areas.get(pb.state) ?? [])]);
    fields.push(...comparePremiums(a, b, id, pb.metal, areas, out.relative));
    if (fields.length > 0) {
      out.changed.push({ id, state: pb.state, issuer: pb.issuer, fields });
      count(pb, 'changed');
      for (const f of fields) out.changedFields[f] = (out.changedFields[f] ?? 0) + 1;
    }
  }
  return out;
}

/**
 * Compares one plan's premiums at {@link DIFF_AGES} in `areas`, adding the relative changes to
 * `relative`; returns 'premium' and/or 'rating_areas' when they differ.
 */
function comparePremiums(
  a: Dataset,
  b: Dataset,
  id: string,
  metal: MetalLevel,
  areas: ReadonlySet<number>,
  relative: Map<string, number[]>,
): PlanField[] {
  let premiumDiffers = false;
  let areasDiffer = false;
  for (const area of areas) {
    for (const age of DIFF_AGES) {
      const before = a.premium(id, area, age);
      const after = b.premium(id, area, age);
      if (before === null || after === null) {
        if (before !== after) areasDiffer = true;
        continue;
      }
      if (before !== after) premiumDiffers = true;
      const key = `${metal}|${age}`;
      let list = relative.get(key);
      if (list === undefined) relative.set(key, (list = []));
      list.push(after / before - 1);
    }
  }
  const fields: PlanField[] = [];
  if (premiumDiffers) fields.push('premium');
  if (areasDiffer) fields.push('rating_areas');
  return fields;
}

function premiumDistributions(relative: ReadonlyMap<string, number[]>): PremiumDistribution[] {
  const distributions: PremiumDistribution[] = [];
  for (const age of DIFF_AGES) {
    for (const metal of METAL_LEVELS) {
      const values = Float64Array.from(relative.get(`${metal}|${age}`) ?? []).sort();
      if (values.length === 0) continue;
      let increased = 0;
      let decreased = 0;
      for (const v of values)
        if (v > 0) increased++;
        else if (v < 0) decreased++;
      const q = (x: number): number | null => {
        const v = percentile(values, x);
        return v === null ? null : round6(v);
      };
      distributions.push({
        metal,
        age,
        count: values.length,
        increased,
        decreased,
        unchanged: values.length - increased - decreased,
        median: q(0.5),
        p10: q(0.1),
        p90: q(0.9),
      });
    }
  }
  return distributions;
}

/** ZIPs whose set of (county, rating area) locations changed. */
function zipChanges(geoA: Geography, geoB: Geography): ZipChange[] {
  const out: ZipChange[] = [];
  for (const zip of [...new Set([...geoA.zips.keys(), ...geoB.zips.keys()])].sort()) {
    const x = geoA.zips.get(zip);
    const y = geoB.zips.get(zip);
    const before = x?.keys ?? [];
    const after = y?.keys ?? [];
    if (before.join(',') !== after.join(',')) out.push({ zip, state: (y ?? x)!.state, before, after });
  }
  return out;
}

/** Counties whose rating areas changed (the county table; AK-style ZIP3 rating gives several). */
function countyChanges(a: Dataset, b: Dataset, geoA: Geography, geoB: Geography): CountyChange[] {
  const countyAreas = (ds: Dataset, fips: string): number[] => [...(ds.county(fips)?.rating_areas ?? [])].sort((m, n) => m - n);
  const out: CountyChange[] = [];
  for (const fips of [...new Set([...geoA.counties.keys(), ...geoB.counties.keys()])].sort()) {
    const before = geoA.counties.has(fips) ? countyAreas(a, fips) : [];
    const after = geoB.counties.has(fips) ? countyAreas(b, fips) : [];
    if (before.join(',') === after.join(',')) continue;
    const rec = b.county(fips) ?? a.county(fips);
    out.push({ fips, state: geoB.counties.get(fips) ?? geoA.counties.get(fips)!, name: rec?.name ?? fips, before, after });
  }
  return out;
}

/** The SLCSP of every rating area either build has, at {@link SLCSP_AGE}. */
function slcspChanges(a: Dataset, b: Dataset, geoA: Geography, geoB: Geography): SlcspChange[] {
  const areaKeys = new Set<string>();
  for (const geo of [geoA, geoB]) for (const [state, set] of geo.areas) for (const n of set) areaKeys.add(`${state}:${n}`);
  return [...areaKeys]
    .map((k) => {
      const [state, n] = k.split(':') as [string, string];
      const area = Number(n);
      const before = a.slcsp(state, area, SLCSP_AGE)?.amount ?? null;
      const after = b.slcsp(state, area, SLCSP_AGE)?.amount ?? null;
      const both = before !== null && after !== null;
      return {
        state,
        rating_area: area,
        before,
        after,
        change: both ? roundCents(after - before) : null,
        relative: both && before !== 0 ? round6(after / before - 1) : null,
      };
    })
    .sort((x, y) => x.state.localeCompare(y.state) || x.rating_area - y.rating_area);
}
