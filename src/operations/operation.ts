/**
 * @module What an operation is: one capability of the service, defined once and served by every front.
 *
 * An operation owns its request schema (query and path parameters), its tier rules, its handler over
 * the engine and its response schema. The REST front maps it to a route, the MCP front to a tool, and
 * the OpenAPI document is generated from the same definition.
 */
import { digestText, HashStream } from '../encoding/fast-hash.ts';
import { jsonString, needsEscape } from '../encoding/json-string.ts';
import { TIER_RANK, type Tier } from '../policy/tiers.ts';
import type { DataRegistry } from './data-registry.ts';
import {
  endpointTierProblem,
  ProblemError,
  proParametersProblem,
  validationProblem,
  type FieldError,
  type ProblemSpec,
} from './problems.ts';
import { parseQuery, type CompiledQuery, type JsonSchema } from './query.ts';
import { queryPairs } from '../encoding/query-string.ts';
import { scratchPart, type RequestScratch } from './request-scratch.ts';

export interface OperationContext {
  readonly registry: DataRegistry;
  /** Absolute origin for links, from configuration (never from the Host header). */
  readonly baseUrl: string;
}

/** Trimmed raw values by canonical name (a `ReadonlyMap`, or a plain query's reused slots). */
export interface QueryValues {
  get(name: string): string | undefined;
}

/** What the handler gets besides the validated parameters. */
export interface RequestMeta {
  /** Canonical names the caller sent, in the order sent. */
  readonly given: readonly string[];
  /** Aliases the caller used (e.g. `page_size`). */
  readonly aliasUsed: { has(alias: string): boolean };
  /** Trimmed raw values by canonical name, for links that echo the request. */
  readonly raw: QueryValues;
}

/**
 * What a handler may answer besides a plain body: a page model that each front renders its own way
 * (src/operations/search-page.ts): the REST front writes it as bytes, MCP takes {@link toBody}.
 */
export interface PageModel {
  /** The response body as objects, equal to the bytes the REST front writes for the model. */
  toBody(): Record<string, unknown>;
  /** Throws when the request that made the model has returned its scratch (request-scratch.ts). */
  check(): void;
}

function isPageModel(out: Record<string, unknown> | PageModel): out is PageModel {
  return typeof (out as Partial<PageModel>).toBody === 'function';
}

/**
 * An operation and its names. Its file is `src/operations/<tool-name>.ts` (the MCP tool name in kebab
 * case) and exports it as `<toolName>Operation` (camel case); `id` and `toolName` are public names fixed
 * by the public API (docs/compatibility.md#mcp-tools), so the file and export follow the tool name, never the reverse.
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
   * no `page` > 1 with a cursor...). They are validation (step 7 of docs/compatibility.md#request-processing-order), so they run
   * before the parameter tier gate and the year check, not in {@link handle}.
   */
  readonly check?: (params: P) => readonly FieldError[];
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
  /**
   * Throws {@link ProblemError} for 400/404; returns the resource (or its page model) otherwise. Records
   * it reuses come from `scratch`, and what it returns may be valid only while the caller holds it.
   */
  handle(ctx: OperationContext, params: P, meta: RequestMeta, scratch: RequestScratch): Record<string, unknown> | PageModel;
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

export type ExecuteResult = Executed | { readonly ok: false; readonly problem: ProblemSpec };

/**
 * A request answered: its page model when the operation made one, its body as objects on demand, the
 * hash of its canonical request (the ETag's request part) and that text itself on demand (the response
 * cache's key): a search, which no cache keeps by canonical form, never builds it. One per scratch,
 * rewritten by each request: every member is valid only while the request holds the scratch.
 */
export class Executed {
  readonly ok = true;
  #model: PageModel | null = null;
  /** The two lanes of fastHash({@link canonical}). */
  hashA = 0;
  hashB = 0;
  #body: Record<string, unknown> | null = null;
  #canonical: string | null = null;
  #id = '';
  #params: Record<string, unknown> = {};
  #names: readonly string[] = [];
  #scratch: RequestScratch | null = null;
  #lease = 0;
  readonly #hash = new HashStream();

  /** Makes this the answer `out` of the request holding `scratch`. */
  set(
    out: Record<string, unknown> | PageModel,
    id: string,
    params: Record<string, unknown>,
    names: readonly string[],
    scratch: RequestScratch,
  ): this {
    this.#model = isPageModel(out) ? out : null;
    this.#body = isPageModel(out) ? null : out;
    this.#canonical = null;
    this.#id = id;
    this.#params = params;
    this.#names = names;
    this.#scratch = scratch;
    this.#lease = scratch.lease;
    const h = canonicalHashStream(this.#hash, id, params, names);
    this.hashA = h.laneA;
    this.hashB = h.laneB;
    return this;
  }

  #check(): void {
    this.#scratch?.check(this.#lease, 'an executed request');
  }

  /** fastHash of {@link canonical}. */
  get hash(): string {
    this.#check();
    return digestText(this.hashA, this.hashB);
  }

  /** The canonical request (see {@link canonicalRequest}). */
  get canonical(): string {
    this.#check();
    return (this.#canonical ??= canonicalRequest(this.#id, this.#params, this.#names));
  }

  /** The page model the REST front writes as bytes; null when the handler answered a plain body. */
  get model(): PageModel | null {
    this.#check();
    this.#model?.check();
    return this.#model;
  }

  /** The body as objects (the model's, made on first use: MCP and tests); the caller's to keep. */
  get body(): Record<string, unknown> {
    this.#check();
    return (this.#body ??= this.model!.toBody());
  }
}

/** The scratch's answer record. */
const EXECUTED = scratchPart('executed request', () => new Executed());

/**
 * Steps 6–10 of the request order (docs/compatibility.md#request-processing-order): endpoint tier, validation, parameter tier,
 * year loaded, resource. Authentication and quota (steps 4–5) belong to the front, before this.
 * `query`: name/value pairs (MCP), or a REST query string as sent, which a plain valid request reads
 * without pairs (plain-query.ts). `scratch` must be borrowed, for this one request: the answer is made
 * of its records and is valid until it is released.
 */
export function execute<P>(
  op: Operation<P>,
  ctx: OperationContext,
  tier: Tier,
  query: ReadonlyArray<readonly [string, string]> | string,
  pathParams: Readonly<Record<string, string>>,
  scratch: RequestScratch,
): ExecuteResult {
  scratch.claimAnswer();
  if (TIER_RANK[tier] < TIER_RANK[op.tier]) {
    return { ok: false, problem: endpointTierProblem(op.tierDetail) };
  }
  const reader = typeof query === 'string' && op.query.plain !== null ? scratch.part(op.query.plain) : null;
  const plain = reader === null ? null : reader.read(query as string, pathParams);
  const parsed = plain !== null ? plain : parseQuery<P>(op.query, typeof query === 'string' ? queryPairs(query) : query, pathParams);
  if ('ok' in parsed && !parsed.ok) return { ok: false, problem: validationProblem(parsed.errors, op.query.spec.alternatives).spec };
  const params = parsed.params as P & { year?: number };
  const meta: RequestMeta = 'ok' in parsed ? parsed : parsed.meta;
  const crossErrors = op.check?.(params);
  if (crossErrors !== undefined && crossErrors.length > 0) return { ok: false, problem: validationProblem(crossErrors).spec };
  // Which Pro parameters were used matters only to a caller below Pro.
  const pro = TIER_RANK[tier] < TIER_RANK.pro ? (op.proParams?.(meta.given, params) ?? []) : [];
  if (pro.length > 0) {
    return { ok: false, problem: proParametersProblem(pro) };
  }
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
    const out = op.handle(ctx, params, meta, scratch);
    return scratch.part(EXECUTED).set(out, op.id, params as Record<string, unknown>, sortedNames(op), scratch);
  } catch (err) {
    if (err instanceof ProblemError) return { ok: false, problem: err.spec };
    throw err;
  }
}

/** An answer as objects that outlive the request: its body, or the problem. */
export type BodyResult =
  | { readonly ok: true; readonly body: Record<string, unknown> }
  | { readonly ok: false; readonly problem: ProblemSpec };

/**
 * {@link execute} in a borrow of `scratch` of its own, answered as objects the caller keeps: for the
 * fronts that answer with objects (MCP), documents made from examples, and tests.
 */
export function executeToBody<P>(...args: Parameters<typeof execute<P>>): BodyResult {
  const scratch = args[5];
  scratch.borrow();
  try {
    const result = execute(...args);
    return result.ok ? { ok: true, body: result.body } : result;
  } finally {
    scratch.release();
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

/**
 * fastHash(canonicalRequest(id, params, names)), fed from the parameters without making the text.
 * `names` must hold every key of `params` (else the text is made and hashed, as canonicalRequest sorts).
 */
export function canonicalHash(id: string, params: Record<string, unknown>, names: readonly string[]): string {
  const h = canonicalHashStream(new HashStream(), id, params, names);
  return digestText(h.laneA, h.laneB);
}

/** `stream` reset and fed with the canonical request (as {@link canonicalHash}). */
function canonicalHashStream(stream: HashStream, id: string, params: Record<string, unknown>, names: readonly string[]): HashStream {
  const h = stream.reset();
  h.text(id);
  h.char(63); // ?
  let first = true;
  let listed = 0;
  for (let i = 0; i < names.length; i++) {
    const k = names[i]!;
    if (!Object.hasOwn(params, k)) continue;
    listed++;
    const v = params[k];
    if (v === undefined) continue;
    if (!first) h.char(38); // &
    first = false;
    h.text(k);
    h.char(61); // =
    hashValue(h, v);
  }
  let keys = 0;
  for (const k in params) if (Object.hasOwn(params, k)) keys++;
  if (keys === listed) return h;
  h.reset();
  h.text(canonicalRequest(id, params, names));
  return h;
}

/** The characters canonicalRequest writes for a value. */
function hashValue(h: HashStream, v: unknown): void {
  if (typeof v === 'number') h.number(v);
  else if (typeof v === 'boolean') h.text(v ? 'true' : 'false');
  else if (typeof v === 'string' && !needsEscape(v)) {
    h.char(34);
    h.text(v);
    h.char(34);
  } else if (Array.isArray(v) && v.every(isPlainItem)) {
    // A list of ages or plan ids, fed as JSON.stringify writes it without making that text.
    h.char(91); // [
    for (let i = 0; i < v.length; i++) {
      if (i > 0) h.char(44); // ,
      hashValue(h, v[i]);
    }
    h.char(93); // ]
  } else h.text(typeof v === 'string' ? jsonString(v) : JSON.stringify(v));
}

/** A list item {@link hashValue} writes as JSON.stringify does: a finite number or a string without escapes. */
function isPlainItem(x: unknown): boolean {
  return (typeof x === 'number' && Number.isFinite(x)) || (typeof x === 'string' && !needsEscape(x));
}

/** The weak ETag of a response: the build and the hash of its canonical request. */
export function etagOf(version: string, hash: string): string {
  return `W/"${version}-${hash}.r1"`;
}

/** Where the hash starts in an ETag of `version` ({@link etagOf}). */
export function etagHashAt(version: string): number {
  return 3 + version.length + 1;
}

/** Query string echoing the request: canonical names in table order, aliases rewritten, no defaults. */
export function echoQuery(order: readonly string[], raw: QueryValues, extra: ReadonlyArray<readonly [string, string]> = []): string {
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

/** Percent-encodes a query value but keeps commas literal (docs/compatibility.md#hal-links). */
export function encodeValue(v: string): string {
  return URL_SAFE.test(v) ? v : encodeURIComponent(v).replaceAll('%2C', ',');
}
