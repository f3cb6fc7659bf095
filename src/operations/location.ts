/**
 * @module Resolving the location of a request: ZIP, optional county, plan data present
 * (docs/compatibility.md#zips-in-several-rating-areas): the primary location unless `county_fips`
 * picks another; a county the ZIP does not touch is a 400 on that field; an unknown ZIP is a 404; a
 * state without plan data is a 404 naming state and year.
 */
import type { ZipLocation } from '../engine/dataset.ts';
import { NO_LIST } from '../engine/build-format.ts';
import { pickLocation, ratingAreaLabel, type DataRegistry, type YearData } from './data-registry.ts';
import { planDataYears, planDataYearsClause } from './plan-data-years.ts';
import { notFound, validationProblem, type ProblemError } from './problems.ts';

/** The request parameters that place a priced request: every such operation's parameters extend them. */
export interface LocationParams {
  zip: string;
  year: number;
  county_fips?: string;
}

export interface ResolvedLocation {
  readonly loc: ZipLocation;
  readonly multipleAreas: boolean;
}

export function resolveLocation(
  yd: YearData,
  zip: string,
  countyFips: string | undefined,
  opts: { requirePlans: boolean; registry?: DataRegistry },
): ResolvedLocation {
  const locations = yd.ds.resolveZip(zip);
  if (locations === null) throw notFound(`ZIP code ${zip} not found.`);
  const loc = pickLocation(locations, countyFips);
  if (loc === null) throw validationProblem([{ field: 'county_fips', message: `County ${countyFips} is not part of ZIP ${zip}` }]);
  if (opts.requirePlans && (loc.listId === NO_LIST || !yd.statesWithPlans.has(loc.state)))
    throw noPlanData(loc.state, yd.year, '', opts.registry === undefined ? null : planDataYears(opts.registry, loc.state));
  let resolved = RESOLVED.get(loc);
  if (resolved === undefined) RESOLVED.set(loc, (resolved = { loc, multipleAreas: spansRatingAreas(locations) }));
  return resolved;
}

/**
 * Resolved locations by location: both are immutable and a dataset keeps its ZIP locations for its
 * lifetime (dataset.ts zipResolver), so every request placed at one shares one object.
 */
const RESOLVED = new WeakMap<ZipLocation, ResolvedLocation>();

/**
 * States without plan data in the build (README, "States without plan data"): every request about such
 * a state, by its ZIP or by the state letters of a plan ID, answers this one 404; only the APTC estimate
 * answers instead, from the published benchmark table, where that table prices the location.
 */
export function noPlanData(state: string, year: number, why = '', yearsWithPlans: readonly number[] | null = null): ProblemError {
  return notFound(
    `No plan data for ${state} in ${year}${why}${yearsWithPlans === null ? '' : planDataYearsClause(state, yearsWithPlans)}.`,
  );
}

/**
 * Whether the build's published SLCSP table prices a location: what an APTC estimate in a state without
 * plan data answers from. The table is per rating area and age-rated from one curve, so the adult (21)
 * rate stands for every age; the ZIP lookup and the estimate ask this same question.
 */
export function hasPublishedBenchmark(yd: YearData, loc: ZipLocation): boolean {
  return yd.ds.slcsp(loc.state, loc.ratingArea, 21) !== null;
}

/**
 * True when the locations of a ZIP lie in more than one rating area (a state's area numbers are its
 * own, so the pair is compared). Two counties of one area price alike and are not "multiple areas".
 */
export function spansRatingAreas(locations: readonly ZipLocation[]): boolean {
  const first = locations[0];
  return first !== undefined && locations.some((l) => l.state !== first.state || l.ratingArea !== first.ratingArea);
}

/** Location members shared by search, compare and OOP responses. */
export function locationFields(r: ResolvedLocation): {
  zip: string;
  state: string;
  county: string;
  county_fips: string;
  rating_area: string;
  multiple_areas: boolean;
} {
  return {
    zip: r.loc.zip,
    state: r.loc.state,
    county: r.loc.countyName,
    county_fips: r.loc.countyFips,
    rating_area: ratingAreaLabel(r.loc.ratingArea),
    multiple_areas: r.multipleAreas,
  };
}

/**
 * The monthly premium of a plan at a resolved location, or null when the plan is not sold there: not in
 * the location's plan list (another state, another service area, a partial county) or not rated in its
 * area. Compare and the OOP estimate both answer null with the same 404 (docs/compatibility.md#plan-comparison).
 */
export function offeredPremium(yd: YearData, where: ResolvedLocation, standardComponentId: string, age: number): number | null {
  const index = yd.ds.planIndex(standardComponentId);
  if (index === undefined || where.loc.listId === NO_LIST) return null;
  const n = yd.ds.listSize(where.loc.listId);
  let listed = false;
  for (let k = 0; k < n && !listed; k++) listed = yd.ds.listPlan(where.loc.listId, k) === index;
  return listed ? yd.ds.premium(standardComponentId, where.loc.ratingArea, age) : null;
}
