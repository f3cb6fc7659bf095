/**
 * @module What an operation is: one capability of the service, defined once and served by every front.
 *
 * An operation owns its request schema (query and path parameters), its tier rules, its handler over
 * the engine and its response schema. The REST front maps it to a route, the MCP front to a tool, and
 * the OpenAPI document is generated from the same definition.
 */
import { fastHash } from './fast-hash.ts';
import { jsonString } from './json-string.ts';
import { TIER_RANK, type Tier } from '../policy/tiers.ts';
import type { DataRegistry } from './data-registry.ts';
import { ProblemError, validationProblem, type FieldError, type ProblemSpec } from './problems.ts';
import { parseQuery, type CompiledQuery, type JsonSchema } from './query.ts';

export interface OperationContext {
  readonly registry: DataRegistry;
  /** Absolute origin for links, from configuration (never from the Host header). */
  readonly baseUrl: string;
}

/** What the handler gets besides the validated parameters. */
export interface RequestMeta {
  /** Canonical names the caller sent, in the order sent. */
  readonly given: readonly string[];
  /** Aliases the caller used (e.g. `page_size`). */
  readonly aliasUsed: ReadonlySet<string>;
  /** Trimmed raw values by canonical name, for links that echo the request. */
  readonly raw: ReadonlyMap<string, string>;
}

/**
 * An operation and its names. Its file is `src/operations/<tool-name>.ts` (the MCP tool name in kebab
 * case) and exports it as `<toolName>Operation` (camel case); `id` and `toolName` are public names fixed
 * by api-contract §2 and §7.5, so the file and export follow the tool name, never the reverse.
 */
export interface Operation<P = Record<string, unknown>> {
  /** OpenAPI operationId. */
  readonly id: string;
  /** Name of the MCP tool over this operation (snake case). */
  readonly toolName: string;
  /** OpenAPI path template, e.g. `/v1/health/plans/{plan_id}`. */
  readonly path: string;
  /** Other path templates served by the same operation (same parameters), declared so the document lists them. */
  readonly aliasPaths?: readonly string[];
  readonly summary: string;
  readonly description: string;
  /** Lowest tier allowed to call the endpoint at all. */
  readonly tier: Tier;
  /** `detail` of the 402 when a caller's tier is below {@link tier}. */
  readonly tierDetail?: string;
  readonly query: CompiledQuery<P>;
  /** Path parameters in order of appearance. */
  readonly pathParams: readonly string[];
  /** Pro-only parameters the request used, in request order (search only). */
  readonly proParams?: (given: readonly string[], params: P) => string[];
  /**
   * Rules between parameters that the JSON Schema cannot express (`income` needs `household_size`,
   * no `page` > 1 with a cursor...). They are validation (step 7 of api-contract §1.2), so they run
   * before the parameter tier gate and the year check, not in {@link handle}.
   */
  readonly check?: (params: P) => FieldError[];
  readonly responseSchema: JsonSchema;
  /**
   * The body depends only on the request and the data build, from a finite key space (years, ZIPs,
   * states, plans): a front may keep the serialized response for the life of the build.
   */
  readonly cacheable?: boolean;
  /**
   * `year` is not a loaded plan year to default and check (the crosswalk's is the source year of a
   * year-to-year mapping): the handler checks it itself.
   */
  readonly ownYearCheck?: boolean;
  /** Throws {@link ProblemError} for 400/404; returns the resource otherwise. */
  handle(ctx: OperationContext, params: P, meta: RequestMeta): Record<string, unknown>;
}

/**
 * Declares an operation: `P`, the type of its validated parameters, is taken from its compiled query,
 * so the handler and the rules are checked against it. Its public names keep their literal types, from
 * which `OperationId` (index.ts) is derived. The result serves every front (`Operation<never>` accepts
 * any parameter type).
 */
export function defineOperation<P, Id extends string, ToolName extends string>(
  op: Operation<P> & { readonly id: Id; readonly toolName: ToolName },
): Operation<P> & { readonly id: Id; readonly toolName: ToolName } {
  return op;
}

export type ExecuteResult =
  | { readonly ok: true; readonly body: Record<string, unknown>; readonly canonical: string }
  | { readonly ok: false; readonly problem: ProblemSpec };

/**
 * Steps 6–10 of the request order (api-contract §1.2): endpoint tier, validation, parameter tier,
 * year loaded, resource. Authentication and quota (steps 4–5) belong to the front, before this.
 */
export function execute<P>(
  op: Operation<P>,
  ctx: OperationContext,
  tier: Tier,
  query: ReadonlyArray<readonly [string, string]>,
  pathParams: Readonly<Record<string, string>>,
): ExecuteResult {
  if (TIER_RANK[tier] < TIER_RANK[op.tier]) {
    return {
      ok: false,
      problem: {
        kind: 'paymentRequired',
        detail: op.tierDetail ?? 'This endpoint requires a Pro subscription.',
        required_tier: 'pro',
        upgrade: true,
      },
    };
  }
  const parsed = parseQuery<P>(op.query, query, pathParams);
  if (!parsed.ok) return { ok: false, problem: validationProblem(parsed.errors).spec };
  const crossErrors = op.check?.(parsed.params) ?? [];
  if (crossErrors.length > 0) return { ok: false, problem: validationProblem(crossErrors).spec };
  const pro = op.proParams?.(parsed.given, parsed.params) ?? [];
  if (pro.length > 0 && TIER_RANK[tier] < TIER_RANK.pro) {
    return {
      ok: false,
      problem: {
        kind: 'paymentRequired',
        detail: `The parameter${pro.length > 1 ? 's' : ''} ${pro.join(', ')} require${pro.length > 1 ? '' : 's'} a Pro subscription.`,
        required_tier: 'pro',
        upgrade: true,
      },
    };
  }
  const params = parsed.params as P & { year?: number };
  if ('year' in (op.query.spec.schema.properties as object) && op.ownYearCheck !== true) {
    const year = params.year ?? ctx.registry.currentYear;
    if (ctx.registry.get(year) === undefined) {
      return {
        ok: false,
        problem: validationProblem([
          { field: 'year', message: `Year ${year} is not available. Available years: ${ctx.registry.years.join(', ')}` },
        ]).spec,
      };
    }
    (params as { year?: number }).year = year;
  }
  try {
    const body = op.handle(ctx, params, { given: parsed.given, aliasUsed: parsed.aliasUsed, raw: parsed.raw });
    return { ok: true, body, canonical: canonicalRequest(op.id, params as Record<string, unknown>, sortedNames(op)) };
  } catch (err) {
    if (err instanceof ProblemError) return { ok: false, problem: err.spec };
    throw err;
  }
}

/** Every parameter name an operation's requests can carry, sorted: the canonical request's key order. */
const SORTED_NAMES = new WeakMap<object, readonly string[]>();

function sortedNames(op: Operation<never>): readonly string[] {
  let names = SORTED_NAMES.get(op);
  if (names === undefined) SORTED_NAMES.set(op, (names = [...new Set([...op.query.order, ...op.pathParams, 'year'])].sort()));
  return names;
}

/**
 * A stable text of the validated request: the ETag's request part. Keys sorted, undefined left out.
 * `names` lists the possible keys in sorted order (so no per-request sort); keys outside it are
 * sorted in as usual.
 */
export function canonicalRequest(id: string, params: Record<string, unknown>, names?: readonly string[]): string {
  let keys: readonly string[];
  if (names !== undefined && Object.keys(params).every((k) => names.includes(k))) keys = names;
  else keys = Object.keys(params).sort();
  let out = `${id}?`;
  let first = true;
  for (const k of keys) {
    const v = params[k];
    if (v === undefined) continue;
    out += `${first ? '' : '&'}${k}=${typeof v === 'number' || typeof v === 'boolean' ? String(v) : typeof v === 'string' ? jsonString(v) : JSON.stringify(v)}`;
    first = false;
  }
  return out;
}

export function etagFor(version: string, canonical: string): string {
  return `W/"${version}-${fastHash(canonical)}.r1"`;
}

/** Query string echoing the request: canonical names in table order, aliases rewritten, no defaults. */
export function echoQuery(
  order: readonly string[],
  raw: ReadonlyMap<string, string>,
  extra: ReadonlyArray<readonly [string, string]> = [],
): string {
  // Built by concatenation, not an array and a join: it runs for every link of every response.
  let out = '';
  for (let i = 0; i < order.length; i++) {
    const k = order[i]!;
    const v = raw.get(k);
    if (v !== undefined) out += `${out === '' ? '?' : '&'}${k}=${encodeValue(v)}`;
  }
  for (const [k, v] of extra) out += `${out === '' ? '?' : '&'}${k}=${encodeValue(v)}`;
  return out;
}

/** Characters encodeURIComponent leaves alone, plus the comma. */
const URL_SAFE = /^[A-Za-z0-9\-_.!~*'(),]*$/;

/** Percent-encodes a query value but keeps commas literal (api-contract §1.6). */
export function encodeValue(v: string): string {
  return URL_SAFE.test(v) ? v : encodeURIComponent(v).replaceAll('%2C', ',');
}
