/**
 * @module The parameters of a plan search, each declared once: its schema and REST wording, whether
 * it is required or filled in, its tier, how it binds cursors, its MCP wording and the engine filter
 * it sets. Everything else is derived from this table when the module loads: the query schema (and so
 * ajv's validation and the plain REST reader), the `x-pro` flags and the "Pro." of the OpenAPI
 * document, the Pro check of search and stats, the cursor fingerprint, the stats resource's parameters,
 * the MCP tools' argument wording and Pro sentence, the filters set on the engine's query, and the
 * `SearchParams` type. A parameter added here is validated, documented, tier-checked and bound into
 * cursors with no other edit; a binding or tier it does not declare is a type error.
 */
import type { SortKey } from '../engine/dataset.ts';
import { METAL_LEVEL_FILTER_VALUES, PLAN_TYPES, type MetalLevel, type PlanType } from '../engine/plan-record.ts';
import type { SearchFilters } from '../engine/search.ts';
import type { JsonSchema } from './query.ts';
import { AGE_OR_AGES, HOUSEHOLD_AGES, P } from './shared-schemas.ts';

/** Only a type: carries a parameter's value type from its declaration to {@link SearchParams}. */
declare const VALUE: unique symbol;

/**
 * How a parameter enters a cursor's fingerprint (search-plans.ts), so that a cursor replayed with
 * another value is refused instead of paging another query:
 * - `in-place`: fed at its place in the table, given or not (the parameters cursors were first bound
 *   to: their fingerprint text stays what it always was);
 * - `when-given`: fed after those, name and value, only when given, so that adding one leaves the
 *   cursors of requests without it valid (the way to bind a parameter added later);
 * - `by-location`: bound through the location the `location` parameter resolves to;
 * - `by-build`: bound through the build hash the fingerprint starts with, which is one year's build;
 * - `never`: not bound, with the reason.
 */
export type CursorBinding =
  | { readonly fed: 'in-place'; readonly as: 'text' | 'lowercase' | 'number' | 'boolean' | 'location' }
  | { readonly fed: 'when-given'; readonly as: 'text' | 'number' | 'boolean' | 'numbers' }
  | { readonly fed: 'by-location' }
  | { readonly fed: 'by-build' }
  | { readonly fed: 'never'; readonly why: string };

/**
 * - `free`: any tier;
 * - `pro`: refused below Pro, marked `x-pro` and "Pro." in the document and "Pro:" on the tools;
 * - `pro-unless-default`: refused below Pro unless it is its schema's default (sort_by=premium).
 */
export type ParameterTier = 'free' | 'pro' | 'pro-unless-default';

/**
 * What the parameter is about; stats take all but `order` and `page`, and the tools' Pro sentence
 * names the Pro `filter` ones.
 */
export type ParameterRole = 'place' | 'filter' | 'credit' | 'order' | 'page';

export interface SearchParameter<T> {
  /** Never set; the value type of the validated parameter. */
  readonly [VALUE]?: T;
  /** Its JSON Schema with the REST description, without the tier's marks (derived from `tier`). */
  readonly schema: JsonSchema & { readonly description: string };
  /** `filled`: absent from a request, the schema's default (or the current year) fills it in. */
  readonly presence: 'required' | 'filled' | 'optional';
  readonly tier: ParameterTier;
  readonly role: ParameterRole;
  readonly cursor: CursorBinding;
  /** What a model reads on the tools, without the tier's "Pro:"; absent: the tools' shared wording. */
  readonly mcp?: string;
  /** The engine filter it sets, with the value converted when the engine's differs. */
  readonly filter?: { readonly key: Exclude<keyof SearchFilters, 'includeCatastrophic'>; readonly from?: (v: T) => unknown };
}

type Presence = SearchParameter<unknown>['presence'];
type Declared<T, Pr extends Presence> = SearchParameter<T> & { readonly presence: Pr };
type Declaration<T> = Omit<SearchParameter<T>, typeof VALUE | 'presence'>;

/** A parameter every request carries. */
function required<T>(p: Declaration<T>): Declared<T, 'required'> {
  return { ...p, presence: 'required' };
}
/** A parameter filled in when absent (its schema's default, or the current year). */
function filled<T>(p: Declaration<T>): Declared<T, 'filled'> {
  return { ...p, presence: 'filled' };
}
function optional<T>(p: Declaration<T>): Declared<T, 'optional'> {
  return { ...p, presence: 'optional' };
}

const { 'x-pro': _agesPro, ...AGES_SCHEMA } = HOUSEHOLD_AGES;

/** The search's parameters, in documentation order (the order of the document, links and fingerprint). */
export const SEARCH_PARAMETERS = {
  zip: required<string>({ schema: P.zip, tier: 'free', role: 'place', cursor: { fed: 'in-place', as: 'location' } }),
  age: optional<number>({ schema: AGE_OR_AGES, tier: 'free', role: 'place', cursor: { fed: 'in-place', as: 'number' } }),
  ages: optional<number[]>({
    schema: { ...AGES_SCHEMA, description: AGES_SCHEMA.description.replace(/^Pro\. /, '') },
    tier: 'pro',
    role: 'place',
    cursor: { fed: 'when-given', as: 'numbers' },
  }),
  year: filled<number>({ schema: P.year, tier: 'free', role: 'place', cursor: { fed: 'by-build' } }),
  county_fips: optional<string>({ schema: P.county_fips, tier: 'free', role: 'place', cursor: { fed: 'by-location' } }),
  metal_level: optional<string>({
    schema: { type: 'string', enum: [...METAL_LEVEL_FILTER_VALUES], description: 'Only plans of this metal level' },
    tier: 'free',
    role: 'filter',
    cursor: { fed: 'in-place', as: 'text' },
    filter: { key: 'metalLevel', from: (v) => v.replace('_', ' ') as MetalLevel },
  }),
  plan_type: optional<PlanType>({
    schema: { type: 'string', enum: [...PLAN_TYPES], description: 'Only plans of this network type' },
    tier: 'free',
    role: 'filter',
    cursor: { fed: 'in-place', as: 'text' },
    filter: { key: 'planType' },
  }),
  issuer: optional<string>({
    schema: { type: 'string', minLength: 1, maxLength: 100, description: 'Case-insensitive partial match on the issuer name' },
    tier: 'pro',
    role: 'filter',
    cursor: { fed: 'in-place', as: 'lowercase' },
    mcp: 'case-insensitive part of the issuer name',
    filter: { key: 'issuer', from: (v) => v.toLowerCase() },
  }),
  hsa_eligible: optional<boolean>({
    schema: { type: 'boolean', description: 'true: only HSA-eligible plans; false: only the others' },
    tier: 'pro',
    role: 'filter',
    cursor: { fed: 'in-place', as: 'boolean' },
    mcp: 'only plans that are (true) or are not (false) HSA-eligible',
    filter: { key: 'hsaEligible' },
  }),
  max_premium: optional<number>({
    schema: {
      type: 'number',
      minimum: 0,
      description: 'Maximum monthly premium before credit, dollars (the household’s total with ages)',
    },
    tier: 'pro',
    role: 'filter',
    cursor: { fed: 'in-place', as: 'number' },
    mcp: 'monthly premium cap, dollars (the household total with ages)',
    filter: { key: 'maxPremium' },
  }),
  max_deductible: optional<number>({
    schema: { type: 'number', minimum: 0, description: 'Maximum individual deductible, dollars' },
    tier: 'pro',
    role: 'filter',
    cursor: { fed: 'in-place', as: 'number' },
    mcp: 'individual deductible cap, dollars',
    filter: { key: 'maxDeductible' },
  }),
  sort_by: filled<SortKey>({
    schema: {
      type: 'string',
      enum: ['premium', 'deductible', 'max_oop', 'name'] satisfies SortKey[],
      default: 'premium',
      description: 'Non-default values are Pro',
    },
    tier: 'pro-unless-default',
    role: 'order',
    cursor: { fed: 'in-place', as: 'text' },
    mcp: 'Sort key (default premium); non-default values are Pro',
  }),
  sort_order: filled<'asc' | 'desc'>({
    schema: { type: 'string', enum: ['asc', 'desc'], default: 'asc', description: 'Direction of sort_by (alias order)' },
    tier: 'free',
    role: 'order',
    cursor: { fed: 'in-place', as: 'text' },
    mcp: 'Sort direction (default asc)',
  }),
  cursor: optional<string>({
    schema: { type: 'string', maxLength: 512, description: 'Opaque; the next_cursor of the previous page' },
    tier: 'free',
    role: 'page',
    cursor: { fed: 'never', why: 'it is the position the fingerprint travels with' },
    mcp: 'next_cursor of the previous result',
  }),
  page: filled<number>({
    schema: { type: 'integer', minimum: 1, default: 1, description: 'Page number of offset pagination (not with cursor)' },
    tier: 'free',
    role: 'page',
    cursor: { fed: 'never', why: 'a cursor replaces the page number (page > 1 with a cursor is refused)' },
    mcp: 'Page number, from 1 (not with cursor)',
  }),
  per_page: filled<number>({
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 25, description: 'Alias page_size' },
    tier: 'free',
    role: 'page',
    cursor: { fed: 'never', why: 'the rows after a given plan are the same whatever the page size' },
    mcp: 'Plans per page, 1–100 (default 25)',
  }),
  income: optional<number>({
    schema: { type: 'number', minimum: 0, maximum: 10_000_000, description: 'Annual household income for the credit estimate' },
    tier: 'pro',
    role: 'credit',
    cursor: { fed: 'in-place', as: 'number' },
    mcp: 'annual household income, dollars',
  }),
  household_size: optional<number>({
    schema: { type: 'integer', minimum: 1, maximum: 20, description: 'Household size for the credit estimate' },
    tier: 'pro',
    role: 'credit',
    cursor: { fed: 'in-place', as: 'number' },
    mcp: 'people in the tax household',
  }),
} as const;

type Table = typeof SEARCH_PARAMETERS;
export type SearchParameterName = keyof Table;
type ValueOf<E> = E extends SearchParameter<infer T> ? T : never;
type Named<Pr extends Presence> = { [K in SearchParameterName]: Table[K]['presence'] extends Pr ? K : never }[SearchParameterName];

/**
 * Validated search parameters. Exactly one of age and ages is given (the query's alternatives); the
 * `filled` ones are always there (a default, or the current year).
 */
export type SearchParams = { -readonly [K in Named<'required' | 'filled'>]: ValueOf<Table[K]> } & {
  -readonly [K in Named<'optional'>]?: ValueOf<Table[K]>;
};

type Entry = readonly [SearchParameterName, SearchParameter<unknown>];
/** The table as entries, typed for the walks below. */
export const SEARCH_PARAMETER_ENTRIES: readonly Entry[] = Object.entries(SEARCH_PARAMETERS) as unknown as Entry[];

/** The REST schema of a parameter: the declared one with its tier's marks. */
function restSchema(p: SearchParameter<unknown>): JsonSchema {
  return p.tier === 'pro' ? { ...p.schema, description: `Pro. ${p.schema.description}`, 'x-pro': true } : p.schema;
}

/** Query schema properties of the search, in documentation order. */
export const SEARCH_PROPERTIES: Readonly<Record<string, JsonSchema>> = Object.fromEntries(
  SEARCH_PARAMETER_ENTRIES.map(([name, p]) => [name, restSchema(p)]),
);

/** Names a request must carry. */
export const SEARCH_REQUIRED: readonly string[] = SEARCH_PARAMETER_ENTRIES.filter(([, p]) => p.presence === 'required').map(([n]) => n);

/** Parameters that are about pages or order, not about which plans or how they are priced. */
export const PAGING_AND_ORDER: ReadonlySet<string> = new Set(
  SEARCH_PARAMETER_ENTRIES.filter(([, p]) => p.role === 'order' || p.role === 'page').map(([n]) => n),
);

/** For each Pro parameter, whether a request's value of it needs Pro. */
const PRO_CHECKS: ReadonlyMap<string, (value: unknown) => boolean> = new Map(
  SEARCH_PARAMETER_ENTRIES.filter(([, p]) => p.tier !== 'free').map(([n, p]) => [
    n,
    p.tier === 'pro' ? () => true : (v: unknown) => v !== p.schema.default,
  ]),
);

/** The Pro parameters a request used, in request order (names outside the search's are not Pro). */
export function proParametersUsed(given: readonly string[], params: Readonly<Record<string, unknown>>): string[] {
  return given.filter((n) => PRO_CHECKS.get(n)?.(params[n]) === true);
}

/** Pro filters, in documentation order: what the tools' descriptions list as Pro filters. */
export const PRO_FILTER_NAMES: readonly string[] = SEARCH_PARAMETER_ENTRIES.filter(([, p]) => p.role === 'filter' && p.tier === 'pro').map(
  ([n]) => n,
);

/** The tools' wording of `names` (those that have one), "Pro: " before a Pro one's. */
export function searchToolWording(names: readonly string[]): Record<string, { description: string }> {
  const out: Record<string, { description: string }> = {};
  for (const [n, p] of SEARCH_PARAMETER_ENTRIES) {
    if (p.mcp === undefined || !names.includes(n)) continue;
    out[n] = { description: p.tier === 'pro' ? `Pro: ${p.mcp}` : p.mcp };
  }
  return out;
}

/** A parameter whose value sets an engine filter. */
export interface FilterSetter {
  readonly name: SearchParameterName;
  readonly key: Exclude<keyof SearchFilters, 'includeCatastrophic'>;
  readonly from: ((v: unknown) => unknown) | undefined;
}

/** The parameters that set engine filters. */
export const FILTER_SETTERS: readonly FilterSetter[] = SEARCH_PARAMETER_ENTRIES.flatMap(([name, p]) =>
  p.filter === undefined ? [] : [{ name, key: p.filter.key, from: p.filter.from }],
);
