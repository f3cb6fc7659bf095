/**
 * @module `GET /v1/health/dental/plans`: the stand-alone dental plans offered at a location, kept
 * apart from the medical search. Located as a plan search is (docs/compatibility.md#zips-in-several-rating-areas: the same
 * 404s and 400s), priced for one age from the Rate PUF where one is loaded and null elsewhere, with the
 * label saying so. Ordered by premium then plan id when premiums exist, else by name then plan id;
 * offset pages only (a location has at most a few dozen dental plans).
 */
import { searchDental } from '../engine/dental.ts';
import { resolveLocation, locationFields } from './location.ts';
import { defineOperation, echoQuery, encodeValue } from './operation.ts';
import { compileQuery } from './query.ts';
import {
  DENTAL_LABELS,
  DENTAL_PLAN_PROPERTIES,
  DENTAL_PLAN_REQUIRED,
  DENTAL_PREMIUM_PROPERTIES,
  DENTAL_SELF_LINKS,
  dentalLabels,
  dentalPlanFields,
  noDentalRatesNote,
  unratedNote,
} from './dental-plan-fields.ts';
import { LINKS_OF, P, PRICED_AT, LOCATED_PAGE_REQUIRED } from './shared-schemas.ts';

interface Params {
  zip: string;
  age: number;
  year: number;
  county_fips?: string;
  page: number;
  per_page: number;
}

const QUERY = compileQuery<Params>({
  schema: {
    type: 'object',
    properties: {
      zip: P.zip,
      age: P.age,
      year: P.year,
      county_fips: P.county_fips,
      page: { type: 'integer', minimum: 1, default: 1, description: 'Page number (from 1)' },
      per_page: { type: 'integer', minimum: 1, maximum: 100, default: 25, description: 'Alias page_size' },
    },
    required: ['zip', 'age'],
  },
  aliases: { page_size: 'per_page' },
});

/** Parameters echoed by the first/prev/next/last links, which set page themselves. */
const LINK_ORDER = QUERY.order.filter((k) => k !== 'page');

const DENTAL_SUMMARY = {
  type: 'object',
  properties: { _links: DENTAL_SELF_LINKS, ...DENTAL_PLAN_PROPERTIES, ...DENTAL_PREMIUM_PROPERTIES },
  required: ['_links', ...DENTAL_PLAN_REQUIRED, ...Object.keys(DENTAL_PREMIUM_PROPERTIES)],
  additionalProperties: false,
} as const;

export const DENTAL_SEARCH_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self', 'first', 'next', 'prev', 'last', 'plan_detail'], ['self', 'first', 'last', 'plan_detail']),
    _embedded: {
      type: 'object',
      description: 'HAL embedded resources',
      properties: {
        dental_plans: {
          type: 'array',
          items: DENTAL_SUMMARY,
          description: 'The dental plans of this page: by premium then plan id when premiums are loaded, otherwise by name then plan id',
        },
      },
      required: ['dental_plans'],
      additionalProperties: false,
    },
    total: { type: 'integer', description: 'Dental plan variants offered at the location' },
    page: { type: 'integer', description: 'Page number (from 1)' },
    per_page: { type: 'integer', description: 'Plans per page' },
    page_size: { type: 'integer', description: 'Same as per_page; present only when the request used the page_size alias' },
    premiums_loaded: {
      type: 'boolean',
      description: 'Whether dental rates (a Rate PUF) are loaded for the state and year; when false every premium is null',
    },
    premium_note: {
      type: ['string', 'null'],
      description: 'Null when dental rates are loaded; otherwise why every premium is null (never modeled)',
    },
    zip: { type: 'string', description: 'The ZIP code searched' },
    state: { type: 'string', description: 'Two-letter state code of the location' },
    ...PRICED_AT,
    ...DENTAL_LABELS,
  },
  required: ['_links', '_embedded', 'total', 'page', 'per_page', 'premiums_loaded', 'premium_note', ...LOCATED_PAGE_REQUIRED],
  additionalProperties: false,
} as const;

export const searchDentalPlansOperation = defineOperation({
  id: 'searchDentalPlans',
  toolName: 'search_dental_plans',
  path: '/v1/health/dental/plans',
  summary: 'Search stand-alone dental plans',
  description:
    'Stand-alone dental plans (individual market) offered at a ZIP (and county), apart from medical plans, with the monthly premium for the age from the Rate PUF where dental rates are loaded (the 2024 CT, RI and VT state-exchange files). Elsewhere premium is null and premium_note says why: dental premiums are never modeled. Ordered by premium then plan id when premiums are loaded, otherwise by name then plan id.',
  tier: 'free',
  query: QUERY,
  pathParams: [],
  responseSchema: DENTAL_SEARCH_RESPONSE,
  cacheable: true,
  handle(ctx, p, meta) {
    const yd = ctx.registry.get(p.year)!;
    const where = resolveLocation(yd, p.zip, p.county_fips, { requirePlans: true, registry: ctx.registry });
    const { loc } = where;
    const catalog = yd.ds.dental();
    const rows = searchDental(catalog, { countyFips: loc.countyFips, zip: loc.zip, ratingArea: loc.ratingArea }, p.age);
    const loaded = catalog.ratesLoaded(loc.state);
    const stateNote = loaded ? null : noDentalRatesNote(loc.state, p.year);
    const from = (p.page - 1) * p.per_page;
    const page = rows.slice(from, from + p.per_page);
    const lastPage = Math.max(1, Math.ceil(rows.length / p.per_page));
    const base = `${ctx.baseUrl}/v1/health/dental/plans`;
    const restQuery = echoQuery(LINK_ORDER, meta.raw);
    const q = (n: number): string => `${base}${restQuery}${restQuery === '' ? '?' : '&'}page=${encodeValue(String(n))}`;
    return {
      _links: {
        self: { href: `${base}${echoQuery(QUERY.order, meta.raw)}`, type: 'application/json' },
        first: { href: q(1) },
        next: p.page < lastPage ? { href: q(p.page + 1) } : undefined,
        prev: p.page > 1 ? { href: q(Math.min(p.page - 1, lastPage)) } : undefined,
        last: { href: q(lastPage) },
        plan_detail: { href: `${base}/{plan_id}?year=${p.year}`, templated: true },
      },
      _embedded: {
        dental_plans: page.map(({ plan, premium }) => ({
          _links: { self: { href: `${base}/${plan.id}?year=${p.year}`, type: 'application/json' } },
          ...dentalPlanFields(plan),
          premium,
          premium_source: premium === null ? null : 'rate_puf',
          premium_note: premium !== null ? null : (stateNote ?? unratedNote(loc.ratingArea, p.age)),
        })),
      },
      total: rows.length,
      page: p.page,
      per_page: p.per_page,
      page_size: meta.aliasUsed.has('page_size') ? p.per_page : undefined,
      premiums_loaded: loaded,
      premium_note: stateNote,
      ...locationFields(where),
      plan_year: p.year,
      ...dentalLabels(yd, loc.state),
    };
  },
});
