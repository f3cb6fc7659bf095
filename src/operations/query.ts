/**
 * @module Query-string parsing and validation shared by every operation (REST query strings and MCP
 * tool arguments alike).
 *
 * One pass over the raw parameters rejects unknown names (with the closest known one) and repeated
 * single-valued keys (list parameters may repeat), drops empty values (absent parameters:
 * docs/compatibility.md#transport-and-methods), folds aliases into canonical names (reporting
 * conflicts) and splits list parameters, so that ajv then sees one object and errors point at
 * `ages.2`. Every violation of a request is reported together; messages follow the Zod wording of the
 * public docs (docs/compatibility.md#validation-messages).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { PlainReader } from './plain-query.ts';
import type { FieldError } from './problems.ts';
import { scratchPart, type ScratchPart } from './request-scratch.ts';
import type { JsonSchema, QuerySpec } from './query-spec.ts';
import { unknownNameMessage } from './unknown-name.ts';

export type { JsonSchema, QuerySpec } from './query-spec.ts';

// verbose: error objects carry the offending value (`e.data`), which the messages below quote and measure.
const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, allErrors: true, strict: true, allowUnionTypes: true, verbose: true });
ajv.addKeyword('example');
ajv.addKeyword('x-pro');

/** Only a type: carries the parameters' type from {@link compileQuery} to `defineOperation`. */
declare const PARAMS: unique symbol;

/** A compiled query spec whose valid requests are parameters of type `P`. */
export interface CompiledQuery<P = never> {
  /** Never set; `P` in a parameter position, so a query of `P` also serves where any query is expected. */
  readonly [PARAMS]?: (params: P) => void;
  readonly spec: QuerySpec;
  /** Canonical parameter names in documentation order (for `self` links). */
  readonly order: readonly string[];
  readonly validate: ValidateFunction;
  readonly integers: ReadonlySet<string>;
  readonly numbers: ReadonlySet<string>;
  readonly booleans: ReadonlySet<string>;
  readonly props: Readonly<Record<string, JsonSchema>>;
  /** Canonical names and aliases, for the per-request pass. */
  readonly known: ReadonlySet<string>;
  readonly lists: ReadonlySet<string>;
  /**
   * The accepted path of plain REST query strings (plain-query.ts): a reader per request scratch, since
   * it keeps the request's values in reused slots. Null: every request takes parseQuery.
   */
  readonly plain: ScratchPart<PlainReader> | null;
}

/** Compiles `spec`; `P` is the type of the parameters it validates, declared next to the spec. */
export function compileQuery<P = Record<string, unknown>>(spec: QuerySpec): CompiledQuery<P> {
  const props = (spec.schema.properties ?? {}) as Record<string, JsonSchema>;
  const kind = (t: string): Set<string> =>
    new Set(
      Object.entries(props)
        .filter(([, s]) => s.type === t || (s.type === 'array' && (s.items as JsonSchema | undefined)?.type === t))
        .map(([k]) => k),
    );
  return {
    spec,
    order: Object.keys(props),
    validate: ajv.compile({ ...spec.schema, additionalProperties: false }),
    integers: kind('integer'),
    numbers: kind('number'),
    booleans: kind('boolean'),
    props,
    known: new Set(Object.keys(props)),
    lists: new Set(spec.lists ?? []),
    plain: PlainReader.compile(spec) === null ? null : scratchPart('plain query reader', () => PlainReader.compile(spec)!),
  };
}

const NO_FIELDS: ReadonlySet<string> = new Set();

export type ParsedQuery<P> =
  | { ok: true; params: P; given: string[]; aliasUsed: ReadonlySet<string>; raw: ReadonlyMap<string, string> }
  | { ok: false; errors: FieldError[] };

/**
 * Validates raw parameters (from URLSearchParams or an MCP call) against an operation's spec.
 * `given` lists the canonical names the caller sent, in the order sent (for tier checks and links).
 */
export function parseQuery<P>(
  q: CompiledQuery<P>,
  raw: ReadonlyArray<readonly [string, string]>,
  pathParams: Readonly<Record<string, string>> = {},
): ParsedQuery<P> {
  const errors: FieldError[] = [];
  const values = new Map<string, string>();
  let aliasUsed: Set<string> | null = null;
  const given: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const [key, value] = raw[i]!;
    // Requests carry a handful of parameters: a backwards scan beats allocating a set per request.
    let repeated = false;
    for (let j = 0; j < i && !repeated; j++) repeated = raw[j]![0] === key;
    const canonical = q.spec.aliases?.[key] ?? key;
    // An unknown name is a mistake, never a no-op: ignoring `metal=silver` (for `metal_level`) answered
    // every plan, unfiltered, with nothing to tell the caller. Names a path carries are judged below.
    if (!q.known.has(canonical) && !Object.hasOwn(pathParams, canonical)) {
      if (!repeated) errors.push({ field: key, message: unknownParameterMessage(q, key, pathParams) });
      continue;
    }
    // A list parameter may be repeated (`ages=40&ages=38`, OpenAPI's form/explode style and the default
    // of generated clients): its items are appended, so the request is the same as `ages=40,38`.
    if (repeated && q.lists.has(canonical) && !Object.hasOwn(pathParams, canonical)) {
      const v = value.trim();
      const prior = values.get(canonical);
      if (v === '') continue;
      if (prior === undefined) given.push(canonical);
      values.set(canonical, prior === undefined ? v : `${prior},${v}`);
      continue;
    }
    if (repeated) {
      if (!errors.some((e) => e.field === key)) errors.push({ field: key, message: 'Parameter must not be repeated' });
      continue;
    }
    // A path parameter named again in the query (`/plans/A?plan_id=B`) is refused rather than letting
    // either copy win silently: the resource, the cache key and the ETag then all name the path's value.
    if (Object.hasOwn(pathParams, canonical)) {
      if (!errors.some((e) => e.field === key)) errors.push({ field: key, message: NOT_A_QUERY_PARAMETER });
      continue;
    }
    const v = value.trim();
    if (v === '') continue;
    if (canonical !== key) (aliasUsed ??= new Set()).add(key);
    const prior = values.get(canonical);
    if (prior !== undefined) {
      if (prior !== v) errors.push({ field: key, message: `Conflicts with ${canonical}` });
      continue;
    }
    values.set(canonical, v);
    given.push(canonical);
  }
  const obj: Record<string, unknown> = { ...pathParams };
  for (const [k, v] of values) {
    if (q.lists.has(k)) {
      const items = v.split(',').map((s) => s.trim());
      values.set(k, items.join(','));
      obj[k] = items;
      continue;
    }
    // ajv's coercion is lenient ("1e3", " 7", "3.0" pass as integers): check number shapes first.
    if (q.integers.has(k) && !/^-?\d+$/.test(v)) {
      errors.push({ field: k, message: /^-?\d*\.\d+$/.test(v) ? 'Expected integer, received float' : 'Expected number, received string' });
      continue;
    }
    if (q.numbers.has(k) && !/^-?(\d+\.?\d*|\.\d+)$/.test(v)) {
      errors.push({ field: k, message: 'Expected number, received string' });
      continue;
    }
    const range = q.integers.has(k) || q.numbers.has(k) ? rangeError(v, q.props[k] ?? {}, q.integers.has(k)) : null;
    if (range !== null) {
      errors.push({ field: k, message: range });
      continue;
    }
    if (q.booleans.has(k) && v !== 'true' && v !== 'false') {
      errors.push({ field: k, message: 'Expected boolean, received string' });
      continue;
    }
    obj[k] = v;
  }
  // List items of integer type get the same strict shape check, each at its own index.
  for (const k of q.spec.lists ?? []) {
    const list = obj[k];
    if (!Array.isArray(list) || !q.integers.has(k)) continue;
    const itemSchema = (q.props[k]?.items ?? {}) as JsonSchema;
    list.forEach((item: unknown, i) => {
      if (typeof item === 'string' && !/^-?\d+$/.test(item)) {
        errors.push({
          field: `${k}.${i}`,
          message: /^-?\d*\.\d+$/.test(item)
            ? 'Expected integer, received float'
            : item === ''
              ? 'Required'
              : 'Expected number, received string',
        });
        return;
      }
      const range = typeof item === 'string' ? rangeError(item, itemSchema, true) : null;
      if (range !== null) errors.push({ field: `${k}.${i}`, message: range });
    });
  }
  const badFields = errors.length === 0 ? NO_FIELDS : new Set(errors.map((e) => e.field.split('.')[0]!));
  for (const f of badFields) delete obj[f];
  const requiredAt = schemaErrors(q, obj, badFields, errors);
  checkAlternatives(q.spec, obj, badFields, errors, requiredAt);
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, params: obj as P, given, aliasUsed: aliasUsed ?? NO_FIELDS, raw: values };
}

/**
 * Adds ajv's errors on the fields not already refused; returns where a schema-required name's error
 * would be (after ajv's own `required` errors, which come first).
 */
function schemaErrors<P>(q: CompiledQuery<P>, obj: Record<string, unknown>, badFields: ReadonlySet<string>, errors: FieldError[]): number {
  let requiredAt = errors.length;
  if (q.validate(obj)) return requiredAt;
  for (const e of q.validate.errors ?? []) {
    const fe = mapAjvError(e, q.props);
    if (fe !== null && !badFields.has(fe.field.split('.')[0]!) && !errors.some((x) => x.field === fe.field)) {
      errors.push(fe);
      if (e.keyword === 'required') requiredAt = errors.length;
    }
  }
  return requiredAt;
}

/**
 * The spec's pairs of which exactly one (`alternatives`) or at most one (`exclusive`) is given; a
 * missing pair's error goes where `required` errors are.
 */
function checkAlternatives(
  spec: QuerySpec,
  obj: Readonly<Record<string, unknown>>,
  badFields: ReadonlySet<string>,
  errors: FieldError[],
  requiredAt: number,
): void {
  let at = requiredAt;
  const usable = (a: string, b: string): boolean => !badFields.has(a) && !badFields.has(b);
  const both = (a: string, b: string): boolean => obj[a] !== undefined && obj[b] !== undefined;
  for (const [a, b] of spec.alternatives ?? []) {
    if (!usable(a, b)) continue;
    if (obj[a] === undefined && obj[b] === undefined) errors.splice(at++, 0, { field: a, message: 'Required' });
    else if (both(a, b)) errors.push(notBoth(a, b));
  }
  for (const [a, b] of spec.exclusive ?? []) if (usable(a, b) && both(a, b)) errors.push(notBoth(a, b));
}

function notBoth(a: string, b: string): FieldError {
  return { field: b, message: `Give ${a} or ${b}, not both` };
}

/**
 * The message of a name the endpoint does not take (unknown-name.ts): the query parameters it takes
 * are the ones to suggest, so a path parameter such as `plan_id` is not one of them.
 */
function unknownParameterMessage(
  q: { readonly order: readonly string[]; readonly spec: QuerySpec },
  key: string,
  pathParams: Readonly<Record<string, string>>,
): string {
  const names = [...q.order, ...Object.keys(q.spec.aliases ?? {})].filter((n) => !Object.hasOwn(pathParams, n));
  return unknownNameMessage(key, names, 'this endpoint takes no query parameters');
}

/** The message of a query parameter that the endpoint takes in its path. */
export const NOT_A_QUERY_PARAMETER = 'Is not a query parameter of this endpoint (it is part of the path)';

/**
 * Range check of a well-shaped numeric text, for what ajv cannot be trusted with: a text of 309 or
 * more digits is ±Infinity as a number, which ajv's coercion lets through every type and range check
 * (age=9…9 priced at 64, per_page=9…9 served as `null`). Integers must also be safe, or the value used
 * is not the value sent. Finite values inside the safe range are left to ajv and its usual messages.
 */
function rangeError(text: string, schema: JsonSchema, integer: boolean): string | null {
  const n = Number(text);
  const limit = integer ? Number.MAX_SAFE_INTEGER : Number.MAX_VALUE;
  if (Number.isFinite(n) && Math.abs(n) <= limit) return null;
  const max = typeof schema.maximum === 'number' ? schema.maximum : integer ? limit : null;
  const min = typeof schema.minimum === 'number' ? schema.minimum : integer ? -limit : null;
  if (n > 0 && max !== null) return `Number must be less than or equal to ${String(max)}`;
  if (n < 0 && min !== null) return `Number must be greater than or equal to ${String(min)}`;
  return 'Number must be finite';
}

function mapAjvError(e: ErrorObject, props: Readonly<Record<string, JsonSchema>>): FieldError | null {
  const path = e.instancePath.split('/').filter(Boolean).join('.');
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { field: String(p.missingProperty), message: 'Required' };
    case 'type': {
      const t = String(p.type);
      return {
        field: path,
        message:
          t === 'boolean'
            ? 'Expected boolean, received string'
            : t === 'integer'
              ? 'Expected integer, received float'
              : `Expected ${t}, received ${typeof e.data}`,
      };
    }
    case 'pattern':
    case 'minLength':
    case 'maxLength': {
      const value = typeof e.data === 'string' ? e.data : '';
      const schema = props[path.split('.')[0]!];
      // Fixed-width codes (zip, county_fips) use the public docs' wording for a wrong length.
      if (schema?.minLength !== undefined && schema.minLength === schema.maxLength && value.length !== schema.minLength) {
        return { field: path, message: `String must contain exactly ${String(schema.minLength)} characters` };
      }
      if (e.keyword === 'minLength') return { field: path, message: `String must contain at least ${String(p.limit)} character(s)` };
      if (e.keyword === 'maxLength') return { field: path, message: `String must contain at most ${String(p.limit)} character(s)` };
      return { field: path, message: 'Invalid' };
    }
    case 'minimum':
      return { field: path, message: `Number must be greater than or equal to ${String(p.limit)}` };
    case 'maximum':
      return { field: path, message: `Number must be less than or equal to ${String(p.limit)}` };
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).map((v) => `'${String(v)}'`).join(' | ');
      return { field: path, message: `Invalid enum value. Expected ${allowed}, received '${String(e.data)}'` };
    }
    case 'minItems':
      return { field: path, message: `Array must contain at least ${String(p.limit)} element(s)` };
    case 'maxItems':
      return { field: path, message: `Array must contain at most ${String(p.limit)} element(s)` };
    case 'additionalProperties':
      return null;
    default:
      return { field: path || '(request)', message: e.message ?? 'Invalid' };
  }
}
