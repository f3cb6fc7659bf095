/**
 * @module `GET /v1/health/zips/{zip}`: every location of a ZIP, primary first. Geography is national;
 * plan data is not: a ZIP of a state without plan data in the build says so (`plans_available: false`
 * and a `note`) rather than naming a `data_source` for data that is not there.
 */
import { ratingAreaLabel } from './data-registry.ts';
import { defineOperation, echoQuery } from './operation.ts';
import { hasPublishedBenchmark, spansRatingAreas } from './location.ts';
import { notFound } from './problems.ts';
import { compileQuery } from './query.ts';
import { PLAN_DATA_YEAR_LINKS, PLAN_DATA_YEARS, planDataYears, planDataYearsClause } from './plan-data-years.ts';
import { LABELS, LINKS_OF, P } from './shared-schemas.ts';

interface Params {
  zip: string;
  year: number;
}

export const ZIP_RESPONSE = {
  type: 'object',
  properties: {
    _links: {
      ...LINKS_OF(['self', 'search']),
      properties: { ...LINKS_OF(['self', 'search']).properties, plan_data_years: PLAN_DATA_YEAR_LINKS },
      description: `${LINKS_OF(['self', 'search']).description}; plan_data_years (this ZIP in each year with plan data for its state, when this year has none)`,
    },
    zip: { type: 'string', description: 'The ZIP code looked up' },
    locations: {
      type: 'array',
      description: 'Every county (and rating area) the ZIP lies in, largest share of residential addresses first',
      items: {
        type: 'object',
        properties: {
          state: { type: 'string', description: 'Two-letter state code' },
          county_fips: { type: 'string', description: '5-digit county FIPS code' },
          county_name: { type: 'string', description: 'County name' },
          rating_area_id: { type: 'string', description: 'The county’s rating area, e.g. "Rating Area 10"' },
          residential_share: { type: 'number', description: 'Share of the ZIP’s residential addresses in this county (HUD), 0–1' },
          primary: { type: 'boolean', description: 'True for the location used when county_fips is not given' },
        },
        required: ['state', 'county_fips', 'county_name', 'rating_area_id', 'primary'],
        additionalProperties: false,
      },
    },
    multiple_areas: { type: 'boolean', description: 'True when the locations lie in different rating areas (premiums differ by county)' },
    planning_regions: {
      type: 'array',
      description:
        'Connecticut only: the 2022 planning regions the ZIP lies in, the county equivalents of today’s Census and HUD files, largest share of residential addresses first. Connecticut rates by its 8 legacy counties, so locations name those (HUD’s last crosswalk before the switch, Q4 2020) and their rating areas; these regions are for recognition only',
      items: {
        type: 'object',
        properties: {
          county_fips: { type: 'string', description: '5-digit FIPS code of the planning region (09110–09190)' },
          name: { type: 'string', description: 'Planning region name, e.g. "Naugatuck Valley Planning Region"' },
          residential_share: { type: 'number', description: 'Share of the ZIP’s residential addresses in this region (HUD, current), 0–1' },
        },
        required: ['county_fips', 'name', 'residential_share'],
        additionalProperties: false,
      },
    },
    plan_year: { type: 'integer', description: 'Plan year the rating areas and plan availability are for' },
    plans_available: {
      type: 'boolean',
      description:
        'Whether the loaded build has plan data for the state of the primary location. When false, search, plan detail, compare and out-of-pocket answer 404 for this ZIP, there is no search link, the crosswalk has no plans of the state, and the APTC estimate answers from published benchmark data only (benchmark_source benchmark_only, an approximation), or 404 where no benchmark is published for the rating area (the note says which)',
    },
    plan_data_years: PLAN_DATA_YEARS,
    note: {
      type: 'string',
      description: 'Present when plans_available is false: which data is missing and what each endpoint answers for this ZIP',
    },
    data_source: {
      type: 'string',
      description: 'Source of the plan data of the primary location’s state; absent when plans_available is false',
    },
    data_freshness: LABELS.data_freshness,
  },
  required: ['_links', 'zip', 'locations', 'multiple_areas', 'plan_year', 'plans_available', 'plan_data_years', 'data_freshness'],
  additionalProperties: false,
} as const;

export const lookupZipOperation = defineOperation({
  id: 'lookupZip',
  toolName: 'lookup_zip',
  path: '/v1/health/zips/{zip}',
  // The singular form some integrators guess (docs/compatibility.md#zip-lookup); the plural is the canonical one.
  aliasPaths: ['/v1/health/zip/{zip}'],
  summary: 'Look up a ZIP code',
  description:
    'State, county and rating area of a ZIP; every location when the ZIP spans several counties or rating areas, ordered by share of residential addresses.',
  tier: 'free',
  query: compileQuery<Params>({ schema: { type: 'object', properties: { zip: P.zip, year: P.year }, required: ['zip'] } }),
  pathParams: ['zip'],
  responseSchema: ZIP_RESPONSE,
  cacheable: true,
  handle(ctx, p, meta) {
    const yd = ctx.registry.get(p.year)!;
    const locations = yd.ds.resolveZip(p.zip);
    if (locations === null) throw notFound(`ZIP code ${p.zip} not found.`);
    const state = locations[0]!.state;
    const plansAvailable = yd.statesWithPlans.has(state);
    const years = planDataYears(ctx.registry, state);
    const linked = plansAvailable ? [] : years;
    return {
      _links: {
        self: { href: `${ctx.baseUrl}/v1/health/zips/${p.zip}${echoQuery(['year'], meta.raw)}`, type: 'application/json' },
        // Never a link to a search that answers 404 (states without plan data in the build).
        ...(plansAvailable
          ? { search: { href: `${ctx.baseUrl}/v1/health/plans?zip=${p.zip}{&age,county_fips,year}`, templated: true } }
          : {}),
        ...(linked.length > 0
          ? {
              plan_data_years: linked.map((y) => ({
                href: `${ctx.baseUrl}/v1/health/zips/${p.zip}?year=${y}`,
                title: `PY${y}`,
              })),
            }
          : {}),
      },
      zip: p.zip,
      locations: locations.map((l) => ({
        state: l.state,
        county_fips: l.countyFips,
        county_name: l.countyName,
        rating_area_id: ratingAreaLabel(l.ratingArea),
        residential_share: Math.round(l.residentialShare * 1e6) / 1e6,
        primary: l.primary,
      })),
      multiple_areas: spansRatingAreas(locations),
      ...planningRegions(yd.ds.planningRegions(p.zip)),
      plan_year: p.year,
      plans_available: plansAvailable,
      plan_data_years: years,
      ...(plansAvailable
        ? { data_source: yd.dataSource(state) }
        : { note: noPlanDataNote(state, p.year, hasPublishedBenchmark(yd, locations[0]!), years) }),
      data_freshness: yd.freshness(state),
    };
  },
});

/**
 * What a ZIP of a state without plan data in the build gets from each endpoint (README, "States without
 * plan data"): the one rule, stated where a caller first meets it, from the predicates the endpoints use.
 */
export function noPlanDataNote(state: string, year: number, benchmark: boolean, yearsWithPlans: readonly number[]): string {
  const aptc = benchmark
    ? '; the APTC estimate answers from published benchmark data only (benchmark_source benchmark_only, an approximation)'
    : ' and so does the APTC estimate (no published benchmark premium for its rating area either)';
  return `No plan data for ${state} in ${year}${planDataYearsClause(state, yearsWithPlans)}: search, plan detail, compare and out-of-pocket answer 404 for this ZIP${aptc}. The crosswalk has no ${state} plans. Its location and rating area are shown.`;
}

/** `planning_regions` of a Connecticut ZIP; nothing elsewhere. */
function planningRegions(regions: ReadonlyArray<{ readonly fips: string; readonly name: string; readonly residentialShare: number }>): {
  planning_regions?: Array<{ county_fips: string; name: string; residential_share: number }>;
} {
  if (regions.length === 0) return {};
  return { planning_regions: regions.map((r) => ({ county_fips: r.fips, name: r.name, residential_share: r.residentialShare })) };
}
