/**
 * @module The columnar tables of a build, assembled stage by stage: rating areas, plans, premium pairs,
 * ZIP locations and their plan lists, list orders, SLCSP, per-state counts. Areas are numbered in the
 * order the stages add them (geography, then rates, then locations), which is part of the build.
 */
import type { TableArrays, TablesMeta } from '../../src/engine/build-format.ts';
import { PLAN_FLAG } from '../../src/engine/build-format.ts';
import type { BuildManifest, StateCounts } from '../../src/engine/manifest.ts';
import type { PlanVariantRecord } from '../../src/engine/plan-record.ts';
import type { TaxYearRules } from '../../src/engine/rules-types.ts';
import type { BenchmarkTable } from '../benchmarks.ts';
import type { Coverage } from '../coverage.ts';
import type { Geography } from '../geo/geography.ts';
import type { RateTable } from '../puf/rates.ts';
import type { DiagnosticSink } from '../read/diagnostics.ts';
import { AreaIndex } from './area-index.ts';
import { listOrders } from './list-orders.ts';
import { locationLists } from './location-lists.ts';
import { planColumns } from './plan-columns.ts';
import { premiumPairs } from './premium-pairs.ts';
import { slcspTable } from './slcsp.ts';
import { stateCounts, type IssuersByState } from './state-counts.ts';

export interface AssembleInput {
  readonly year: number;
  readonly hash: string;
  /** Every state of the geography, plan data or not. */
  readonly jurisdictions: Iterable<string>;
  readonly rules: TaxYearRules;
  readonly sink: DiagnosticSink;
  readonly geo: Geography;
  readonly variantsByScid: Map<string, PlanVariantRecord[]>;
  readonly coverage: Map<string, Coverage>;
  readonly rateTable: RateTable;
  readonly benchmarks: BenchmarkTable;
  /** States whose premiums are modeled (the others' come from a Rates file). */
  readonly modeledStates: ReadonlySet<string>;
}

export interface Assembled {
  readonly meta: TablesMeta;
  readonly arrays: TableArrays;
  readonly rows: number;
  readonly counts: BuildManifest['counts'];
  readonly states: Record<string, StateCounts>;
  readonly issuersByState: IssuersByState;
}

export function assembleTables(a: AssembleInput): Assembled {
  const { geo } = a;
  const states = [...a.jurisdictions].sort();
  const stateIdx = new Map(states.map((s, i) => [s, i]));
  const areas = new AreaIndex();
  for (const s of states) for (const n of [...(geo.stateAreas.get(s) ?? [])].sort((x, y) => x - y)) areas.add(s, n);

  const plans = planColumns(a.variantsByScid, stateIdx);
  const pairs = premiumPairs(plans, a.rateTable, areas);
  const locations = locationLists(geo, a.coverage, plans, pairs, areas);
  const orders = listOrders(locations.lists, plans, pairs);
  const statesWithPlans = new Set(plans.scids.map((s) => plans.primary(s).state));
  const slcsp = slcspTable({
    areas,
    plans,
    pairs,
    statesWithPlans,
    benchmarks: a.benchmarks,
    rules: a.rules,
    modeledStates: a.modeledStates,
    sink: a.sink,
  });
  const perState = stateCounts(geo, plans, a.variantsByScid, pairs);

  const { areaState, areaNumber } = areaColumns(areas, stateIdx);

  const arrays: TableArrays = {
    'area.state': areaState,
    'area.number': areaNumber,
    'zip.start': locations.zipStart,
    'loc.county': locations.county,
    'loc.area': locations.area,
    'loc.share': locations.share,
    'loc.list': locations.list,
    'plan.metal': plans.metal,
    'plan.type': plans.type,
    'plan.state': plans.state,
    'plan.issuer': plans.issuer,
    'plan.flags': plans.flags,
    'plan.deductible': plans.deductible,
    'plan.moop': plans.moop,
    'pair.plan': pairs.plan,
    'pair.area': pairs.area,
    'pair.cents': pairs.cents,
    'list.start': orders.listStart,
    'list.area': orders.listArea,
    'entry.plan': orders.entryPlan,
    'entry.pair': orders.entryPair,
    'order.name': orders.orderName,
    'order.deductible': orders.orderDeductible,
    'order.moop': orders.orderMoop,
    'order.premium-ref': orders.premiumRef,
    'order.premium-pool': orders.premiumPool,
    'slcsp.cents': slcsp.cents,
    'slcsp.source': slcsp.source,
  };
  const nPairs = pairs.plan.length;
  const nE = orders.entryPlan.length;
  return {
    meta: {
      year: a.year,
      buildHash: a.hash,
      states,
      plans: plans.scids,
      planNames: plans.names,
      issuers: plans.issuers,
      ...geographyMeta(geo),
    },
    arrays,
    rows: nPairs + locations.county.length + nE,
    counts: {
      plan_variants: [...a.variantsByScid.values()].reduce((n, v) => n + v.length, 0),
      plans: plans.scids.length,
      offered_plans: [...plans.flags].filter((f) => (f & PLAN_FLAG.onExchange) !== 0).length,
      issuers: plans.issuers.length,
      states_with_plans: statesWithPlans.size,
      zips: geo.zips.size,
      locations: locations.county.length,
      counties: [...geo.counties.values()].filter((c) => geo.countyAreas.has(c.fips)).length,
      rating_areas: areas.count,
      premium_pairs: nPairs,
      rate_rows: pairs.rateRows,
      plan_lists: locations.lists.length,
      plan_list_entries: nE,
    },
    states: perState.states,
    issuersByState: perState.issuersByState,
  };
}

/** County names, and Connecticut ZIPs' planning regions with residential shares (when the build has any). */
function geographyMeta(geo: Geography): Pick<TablesMeta, 'countyNames' | 'planningRegions'> {
  const countyNames: Record<string, string> = {};
  for (const c of geo.counties.values()) countyNames[c.fips] = c.name;
  const planningRegions: Record<string, Array<[string, number]>> = {};
  for (const zip of [...geo.planningRegions.keys()].sort()) {
    planningRegions[zip] = geo.planningRegions.get(zip)!.map((r) => [r.fips, Math.round(r.resRatio * 1e6) / 1e6]);
  }
  return { countyNames, ...(Object.keys(planningRegions).length > 0 ? { planningRegions } : {}) };
}

/** State index and number of each rating area, in area-index order. */
function areaColumns(areas: AreaIndex, stateIdx: ReadonlyMap<string, number>): { areaState: Uint8Array; areaNumber: Uint16Array } {
  const areaState = new Uint8Array(areas.count);
  const areaNumber = new Uint16Array(areas.count);
  areas.keys.forEach(([s, n], i) => {
    areaState[i] = stateIdx.get(s) ?? 255;
    areaNumber[i] = n;
  });
  return { areaState, areaNumber };
}
