/**
 * @module Named component schemas of the OpenAPI document: each resource schema the operations share
 * gets a name (PlanSummary, SearchCollection, Problem…) and every place it is used becomes a `$ref`.
 *
 * Only the published document is rewritten: the operations keep their inline schemas, which ajv and
 * fast-json-stringify compile as before, so naming a schema cannot change a response byte. Schemas are
 * recognised by identity (the same constant object), never by shape, so two look-alike schemas are
 * never merged by accident.
 */
import type { JsonSchema } from '../operations/query.ts';
import { COMPARE_RESPONSE } from '../operations/compare-plans.ts';
import { APTC_RESPONSE, LOCATION } from '../operations/estimate-aptc.ts';
import { OOP_RESPONSE } from '../operations/estimate-out-of-pocket.ts';
import { CROSSWALK_RESPONSE } from '../operations/get-plan-crosswalk.ts';
import { PLAN_DETAIL_RESPONSE } from '../operations/get-plan-details.ts';
import { ISSUERS_RESPONSE } from '../operations/list-issuers.ts';
import { YEARS_RESPONSE } from '../operations/list-plan-years.ts';
import { ZIP_RESPONSE } from '../operations/lookup-zip.ts';
import { SEARCH_RESPONSE } from '../operations/search-plans.ts';
import { HAL_LINK, PLAN_SUMMARY, PROBLEM_RESPONSE } from '../operations/shared-schemas.ts';

/** Component name of each shared schema constant, in the order the document lists them. */
export const COMPONENT_NAMES: ReadonlyMap<object, string> = new Map<object, string>([
  [SEARCH_RESPONSE, 'SearchCollection'],
  [PLAN_SUMMARY, 'PlanSummary'],
  [PLAN_DETAIL_RESPONSE, 'PlanDetail'],
  [COMPARE_RESPONSE, 'Comparison'],
  [OOP_RESPONSE, 'OopEstimate'],
  [APTC_RESPONSE, 'AptcEstimate'],
  [CROSSWALK_RESPONSE, 'Crosswalk'],
  [ZIP_RESPONSE, 'ZipLookup'],
  [YEARS_RESPONSE, 'Years'],
  [ISSUERS_RESPONSE, 'Issuers'],
  [LOCATION, 'Location'],
  [HAL_LINK, 'HalLink'],
  [PROBLEM_RESPONSE, 'Problem'],
]);

export function componentRef(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/** A copy of `schema` with every named schema inside it (and itself, unless `self`) replaced by a `$ref`. */
export function withRefs(schema: unknown, self?: object): unknown {
  if (Array.isArray(schema)) return schema.map((s) => withRefs(s));
  if (schema === null || typeof schema !== 'object') return schema;
  const name = COMPONENT_NAMES.get(schema);
  if (name !== undefined && schema !== self) return componentRef(name);
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, withRefs(v)]));
}

/** `components.schemas`: every named schema, its own nested named schemas as `$ref`s. */
export function componentSchemas(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [schema, name] of COMPONENT_NAMES) out[name] = withRefs(schema, schema);
  return out;
}
