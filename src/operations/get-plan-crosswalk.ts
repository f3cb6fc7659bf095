/**
 * @module `GET /v1/health/plans/crosswalk`: where a plan's enrollees go the next year (docs/compatibility.md#plan-crosswalk).
 *
 * Accepted source years and states are those with crosswalk data in the loaded builds, so the answer
 * follows the data. A year the API knows (the spec's 2025, a loaded plan year) whose crosswalk file is not
 * loaded (the offline default) is a 404 saying so: the request is right, the server lacks the data. Other
 * years are a 400 on `year`. A bad state is reported on `state` alone: the plan ID's state letters are
 * compared with a valid state only.
 */
import type { CrosswalkPlanEntry, CrosswalkRow } from '../engine/crosswalk-record.ts';
import { STANDARD_COMPONENT_ID_PATTERN, variantIdOf } from '../engine/plan-record.ts';
import { STATE_EXCHANGE_STATES, type DataRegistry } from './data-registry.ts';
import { JURISDICTIONS } from './list-issuers.ts';
import { defineOperation, echoQuery } from './operation.ts';
import { notFound, validationProblem, type FieldError } from './problems.ts';
import { compileQuery } from './query.ts';
import { LABELS, LINKS_OF, YEAR_MAX, YEAR_MIN } from './shared-schemas.ts';

interface Params {
  plan_id: string;
  year: number;
  state: string;
}

/** The public API's names for the CMS reason codes (their official PY2026 meanings are unconfirmed). */
export const CROSSWALK_REASONS: Readonly<Record<number, { slug: string; description: string }>> = {
  0: { slug: 'plan_default_crosswalk', description: 'Default crosswalk: enrollees renew into the same plan' },
  1: { slug: 'plan_id_changed', description: 'Plan ID changed; enrollees renew into the renamed plan' },
  2: { slug: 'plan_discontinued_crosswalked', description: 'Discontinued; enrollees are crosswalked to a replacement plan' },
  3: { slug: 'plan_discontinued_no_replacement', description: 'Discontinued with no replacement plan' },
  6: { slug: 'plan_crosswalked_county_level', description: 'Crosswalked at county level' },
  7: { slug: 'plan_crosswalked_issuer_change', description: 'Crosswalked to another issuer' },
  8: { slug: 'plan_crosswalked_service_area_change', description: 'Crosswalked because of a service area change' },
  10: { slug: 'plan_crosswalked_multi_factor', description: 'Crosswalked for several reasons' },
};

const QUERY = compileQuery<Params>({
  schema: {
    type: 'object',
    properties: {
      plan_id: {
        type: 'string',
        minLength: 14,
        maxLength: 14,
        pattern: STANDARD_COMPONENT_ID_PATTERN,
        description: 'Standard component ID without variant suffix',
        example: '47163FL0810001',
      },
      year: { type: 'integer', minimum: YEAR_MIN, maximum: YEAR_MAX, description: 'Source plan year; mapped to year + 1' },
      state: { type: 'string', minLength: 2, maxLength: 2, pattern: '^[A-Z]{2}$', description: 'Two-letter state code of the source plan' },
    },
    required: ['plan_id', 'year', 'state'],
  },
});

/** Crosswalk source years of the public API (docs/compatibility.md#plan-crosswalk: only 2025, mapped to 2026). */
export const CROSSWALK_SPEC_YEARS: readonly number[] = [2025];

/** Source years with crosswalk data, and their states. */
function crosswalkCoverage(registry: DataRegistry): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>();
  for (const y of registry.years) {
    const cw = registry.get(y)!.ds.manifest.crosswalk;
    if (cw !== null) out.set(cw.source_year, new Set(cw.states));
  }
  return out;
}

const CROSSWALK_PLAN = {
  type: 'object',
  description: 'A plan of the crosswalk',
  properties: {
    plan_id: { type: 'string', description: '14-character plan ID (standard component ID)' },
    year: { type: 'integer', description: 'Plan year of this plan' },
    state: { type: 'string', description: 'Two-letter state code' },
    name: { type: ['string', 'null'], description: 'Marketing name, or null when that year’s plan data is not loaded' },
    // Never null: the plan ID's first five digits stand in when the file leaves the issuer column empty.
    issuer_id: { type: 'string', description: '5-digit HIOS issuer ID (of the crosswalk file, else the plan ID’s first five digits)' },
    issuer_name: { type: ['string', 'null'], description: 'Issuer marketing name, or null when that year’s data is not loaded' },
  },
  required: ['plan_id', 'year', 'state', 'name', 'issuer_id', 'issuer_name'],
  additionalProperties: false,
} as const;

export const CROSSWALK_RESPONSE = {
  type: 'object',
  properties: {
    _links: LINKS_OF(['self']),
    source_plan: { ...CROSSWALK_PLAN, description: 'The plan asked about, in the source year' },
    target_plan: {
      description: 'The plan its members are moved to the next year; null when it is discontinued with no replacement',
      anyOf: [CROSSWALK_PLAN, { type: 'null' }],
    },
    crosswalk_reason: {
      type: 'string',
      description: 'Why the plan maps as it does, e.g. plan_id_changed or plan_discontinued_no_replacement',
    },
    reason_description: { type: 'string', description: 'The reason in words' },
    reason_code: { type: 'integer', description: 'CMS ReasonForCrosswalk code' },
    crosswalk_level: {
      type: 'integer',
      description:
        'CMS CrosswalkLevel: 0 same plan ID, 1 plan ID level, 2 plan ID and county, 3 ZIP within a county, 4 no re-enrollment option, 5 withdrawn',
    },
    data_source: { type: 'string', description: 'puf_data: the CMS Plan Crosswalk public use file' },
    data_freshness: LABELS.data_freshness,
  },
  required: [
    '_links',
    'source_plan',
    'target_plan',
    'crosswalk_reason',
    'reason_description',
    'reason_code',
    'data_source',
    'data_freshness',
  ],
  additionalProperties: false,
} as const;

export const getPlanCrosswalkOperation = defineOperation({
  id: 'getCrosswalk',
  toolName: 'get_plan_crosswalk',
  ownYearCheck: true,
  path: '/v1/health/plans/crosswalk',
  summary: 'Plan crosswalk to the next year',
  description:
    'The plan a source-year plan’s enrollees are re-enrolled into the following year (CMS Plan ID Crosswalk PUF). When targets differ by county, the target covering the most counties is returned (ties: lowest plan ID).',
  tier: 'pro',
  tierDetail: 'Plan crosswalk requires a Pro subscription.',
  query: QUERY,
  pathParams: [],
  responseSchema: CROSSWALK_RESPONSE,
  handle(ctx, p, meta) {
    const coverage = crosswalkCoverage(ctx.registry);
    const states = coverage.get(p.year);
    const errors: FieldError[] = [];
    const stateError = !JURISDICTIONS.has(p.state)
      ? `Unknown state code ${p.state}`
      : STATE_EXCHANGE_STATES.has(p.state) || (states !== undefined && !states.has(p.state))
        ? `State ${p.state} has no crosswalk data; only HealthCare.gov states are covered`
        : null;
    if (stateError !== null) errors.push({ field: 'state', message: stateError });
    else if (p.plan_id.slice(5, 7) !== p.state) errors.push({ field: 'plan_id', message: `Plan ${p.plan_id} is not a ${p.state} plan` });
    const known = CROSSWALK_SPEC_YEARS.includes(p.year) || ctx.registry.years.includes(p.year);
    if (states === undefined && !known) {
      const years = [...coverage.keys()].sort();
      errors.unshift({
        field: 'year',
        message:
          years.length === 0
            ? `Year ${p.year} has no crosswalk data; no crosswalk is loaded`
            : `Year ${p.year} has no crosswalk data. Available years: ${years.join(', ')}`,
      });
    }
    if (errors.length > 0) throw validationProblem(errors);
    if (states === undefined) throw notFound(`Crosswalk data for ${p.year} to ${p.year + 1} is not loaded on this server.`);

    const yd = ctx.registry.get(p.year)!;
    const entry = yd.ds.crosswalk(p.plan_id) as CrosswalkPlanEntry | undefined;
    if (entry === undefined || entry.rows.length === 0) throw notFound(`No crosswalk entry for plan ${p.plan_id} in ${p.year}.`);
    const row = pickTarget(entry.rows);
    const reason = CROSSWALK_REASONS[row.reason_code];
    const source = yd.ds.planRecord(variantIdOf(p.plan_id)) ?? yd.ds.planRecord(`${p.plan_id}-00`);
    const next = ctx.registry.get(entry.target_year);
    const target = row.target_plan_id === null || reason?.slug === 'plan_discontinued_no_replacement' ? null : row.target_plan_id;
    const targetRec = target === null ? undefined : (next?.ds.planRecord(variantIdOf(target)) ?? next?.ds.planRecord(`${target}-00`));
    return {
      _links: { self: { href: `${ctx.baseUrl}/v1/health/plans/crosswalk${echoQuery(QUERY.order, meta.raw)}`, type: 'application/json' } },
      source_plan: {
        plan_id: p.plan_id,
        year: p.year,
        state: p.state,
        name: source?.name ?? null,
        issuer_id: row.source_issuer_id ?? p.plan_id.slice(0, 5),
        issuer_name: source?.issuer ?? null,
      },
      target_plan:
        target === null
          ? null
          : {
              plan_id: target,
              year: entry.target_year,
              state: target.slice(5, 7),
              name: targetRec?.name ?? null,
              issuer_id: row.target_issuer_id ?? target.slice(0, 5),
              issuer_name: targetRec?.issuer ?? null,
            },
      crosswalk_reason: reason?.slug ?? `reason_${row.reason_code}`,
      reason_description: reason?.description ?? `CMS reason code ${row.reason_code}`,
      reason_code: row.reason_code,
      crosswalk_level: row.crosswalk_level,
      data_source: 'puf_data',
      data_freshness: `PY${p.year}-PY${entry.target_year} as of ${
        yd
          .freshness(null)
          .replace(/^PY\d{4} as of /, '')
          .split(';')[0]
      }`,
    };
  },
});

/** The target covering the most counties; ties go to the lowest plan id (a discontinuation sorts last). */
export function pickTarget(rows: readonly CrosswalkRow[]): CrosswalkRow {
  const counties = new Map<string, Set<string>>();
  for (const r of rows) {
    const key = r.target_plan_id ?? '~';
    let set = counties.get(key);
    if (set === undefined) counties.set(key, (set = new Set()));
    set.add(r.county_fips);
  }
  const best = [...counties.entries()].sort((a, b) => b[1].size - a[1].size || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))[0]![0];
  return rows.find((r) => (r.target_plan_id ?? '~') === best)!;
}
