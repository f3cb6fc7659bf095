/**
 * @module What the manifest and `/issuers` report per state: issuers with their on-exchange standard
 * plan counts (sorted by name), and counts of plans, variants, ZIPs, counties, rating areas and priced
 * pairs.
 */
import type { StateCounts } from '../../src/engine/manifest.ts';
import type { PlanVariantRecord } from '../../src/engine/plan-record.ts';
import type { Geography } from '../geo/geography.ts';
import { NAME_COLLATOR } from './name-collator.ts';
import type { PlanColumns } from './plan-columns.ts';
import type { PremiumPairs } from './premium-pairs.ts';

export type IssuersByState = Map<string, Array<{ issuer_id: string; name: string; plan_count: number }>>;

export function stateCounts(
  geo: Geography,
  plans: PlanColumns,
  variantsByScid: ReadonlyMap<string, PlanVariantRecord[]>,
  pairs: PremiumPairs,
): { issuersByState: IssuersByState; states: Record<string, StateCounts> } {
  const issuersByState: IssuersByState = new Map();
  const states: Record<string, StateCounts> = {};
  const of = (state: string): StateCounts =>
    (states[state] ??= { plans: 0, variants: 0, issuers: 0, zips: 0, counties: 0, rating_areas: 0, priced_pairs: 0 });
  for (const scid of plans.scids) {
    const v = plans.primary(scid);
    const sc = of(v.state);
    sc.plans += 1;
    sc.variants += variantsByScid.get(scid)!.length;
    if (v.variant !== '01') continue;
    let list = issuersByState.get(v.state);
    if (list === undefined) issuersByState.set(v.state, (list = []));
    let entry = list.find((x) => x.issuer_id === v.issuer_id);
    if (entry === undefined) list.push((entry = { issuer_id: v.issuer_id, name: v.issuer, plan_count: 0 }));
    entry.plan_count += 1;
  }
  for (const [state, list] of issuersByState) {
    list.sort((x, y) => NAME_COLLATOR.compare(x.name, y.name) || (x.issuer_id < y.issuer_id ? -1 : 1));
    of(state).issuers = list.length;
  }
  for (const locs of geo.zips.values()) of(locs[0]!.state).zips += 1;
  for (const c of geo.counties.values()) if (geo.countyAreas.has(c.fips) && states[c.state] !== undefined) states[c.state]!.counties += 1;
  for (const [state, areas] of geo.stateAreas) of(state).rating_areas = areas.size;
  for (let i = 0; i < pairs.plan.length; i++) states[plans.primary(plans.scids[pairs.plan[i]!]!).state]!.priced_pairs += 1;
  return { issuersByState, states };
}
