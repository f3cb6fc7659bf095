/**
 * @module ZIP locations and the plan list offered at each: a location is a (ZIP, county) pair of the
 * geography; its list holds the on-exchange plans whose service area covers it (the whole county, or
 * the ZIP in a partial county) and that are priced in its rating area. Equal lists in one area are
 * stored once.
 */
import { NO_LIST, PLAN_FLAG } from '../../src/engine/build-format.ts';
import type { Coverage } from '../coverage.ts';
import type { Geography } from '../geo/geography.ts';
import type { AreaIndex } from './area-index.ts';
import type { PlanColumns } from './plan-columns.ts';
import type { PremiumPairs } from './premium-pairs.ts';

export interface PlanList {
  readonly area: number;
  /** Plan indexes, ascending. */
  readonly plans: readonly number[];
}

export interface LocationLists {
  readonly lists: readonly PlanList[];
  /** ZIP number `z`'s locations span [zipStart[z], zipStart[z + 1]). */
  readonly zipStart: Uint32Array;
  readonly county: Uint32Array;
  readonly area: Uint16Array;
  readonly share: Float32Array;
  /** List id of each location, {@link NO_LIST} when no plan is offered there. */
  readonly list: Uint32Array;
}

export function locationLists(
  geo: Geography,
  coverage: ReadonlyMap<string, Coverage>,
  plans: PlanColumns,
  pairs: PremiumPairs,
  areas: AreaIndex,
): LocationLists {
  const wholeCounty = new Map<string, number[]>();
  const partialCounty = new Map<string, Array<{ plan: number; zips: ReadonlySet<string> }>>();
  plans.scids.forEach((scid, p) => {
    if ((plans.flags[p]! & PLAN_FLAG.onExchange) === 0) return; // off-exchange plans are not offered on the marketplace
    for (const [fips, zips] of coverage.get(scid) ?? []) {
      if (zips === null) {
        let l = wholeCounty.get(fips);
        if (l === undefined) wholeCounty.set(fips, (l = []));
        l.push(p);
      } else {
        let l = partialCounty.get(fips);
        if (l === undefined) partialCounty.set(fips, (l = []));
        l.push({ plan: p, zips });
      }
    }
  });
  const listIds = new Map<string, number>();
  const lists: PlanList[] = [];
  const county: number[] = [];
  const area: number[] = [];
  const share: number[] = [];
  const list: number[] = [];
  const zipStart = new Uint32Array(100_001);
  let zipCursor = 0;
  for (const zip of [...geo.zips.keys()].sort()) {
    const z = Number(zip);
    while (zipCursor <= z) zipStart[zipCursor++] = county.length;
    for (const loc of geo.zips.get(zip)!) {
      const ai = areas.add(loc.state, loc.ratingArea);
      const offered: number[] = [];
      for (const p of wholeCounty.get(loc.countyFips) ?? []) if (pairs.row(p, ai) !== undefined) offered.push(p);
      for (const { plan, zips } of partialCounty.get(loc.countyFips) ?? []) {
        if (zips.has(zip) && pairs.row(plan, ai) !== undefined) offered.push(plan);
      }
      offered.sort((x, y) => x - y);
      let listId: number = NO_LIST;
      if (offered.length > 0) {
        const key = `${ai}:${offered.join(',')}`;
        let id = listIds.get(key);
        if (id === undefined) {
          id = lists.length;
          lists.push({ area: ai, plans: offered });
          listIds.set(key, id);
        }
        listId = id;
      }
      county.push(Number(loc.countyFips));
      area.push(ai);
      share.push(loc.resRatio);
      list.push(listId);
    }
  }
  while (zipCursor <= 100_000) zipStart[zipCursor++] = county.length;
  return {
    lists,
    zipStart,
    county: Uint32Array.from(county),
    area: Uint16Array.from(area),
    share: Float32Array.from(share),
    list: Uint32Array.from(list),
  };
}
