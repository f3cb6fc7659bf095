/**
 * @module The request pipeline of an operation's route, in the fixed order of docs/compatibility.md#request-processing-order:
 * framing (judged by the front before any handler, rest-front.ts) and negotiation → authentication →
 * quota → response cache → execute → write.
 *
 * Every step is synchronous except the quota, which may have to ask Redis (leased-quota.ts); then the
 * answer is written later, unless the client left meanwhile.
 */
import type { Mutable } from '../engine/mutable.ts';
import { OPERATIONS } from '../operations/index.ts';
import { etagHashAt, etagOf, execute, type Executed, type Operation } from '../operations/operation.ts';
import { scratchPart, threadScratch, type RequestScratch } from '../operations/request-scratch.ts';
import { writeDigest } from '../encoding/fast-hash.ts';
import { SearchPageModel } from '../operations/search-page.ts';
import { AptcPageModel } from '../operations/aptc-page.ts';
import { INTERNAL_ERROR, missingCredential, RATE_LIMITED, STATE_UNAVAILABLE, UNAUTHORIZED } from '../operations/problems.ts';
import { TIER_RANK, type Tier } from '../policy/tiers.ts';
import { AuthCache } from '../policy/auth-cache.ts';
import type { QuotaDecision } from '../policy/quota.ts';
import { rateLimitHeaders } from '../policy/rate-limit-headers.ts';
import { RequestMetrics } from '../observability/request-metrics.ts';
import { acceptsJson, ifNoneMatchMatches, linkHeader } from './conditional.ts';
import { NOT_ACCEPTABLE } from './front-problems.ts';
import { queryPairs } from '../encoding/query-string.ts';
import { generatedRequestId, givenRequestId } from './request-id.ts';
import type { ResponseCache } from './response-cache.ts';
import type { Label, RestFront, ServerConfig } from './rest-front.ts';
import { writeOk, type CachedResponse, type OkReply, type Reply } from './rest-writers.ts';
import { compileSerializer, fragmentSerializer } from './serializers.ts';
import { ByteWriter } from '../encoding/byte-writer.ts';
import { writeSearchPage } from './search-page-writer.ts';
import { writeAptcPage } from './aptc-page-writer.ts';
import { chooseCoding, compressVariants, variantBytes } from './compression.ts';
import type { HttpRequest, HttpResponse } from './uws.ts';

const REALM = 'Bearer realm="health-api"';
const INVALID_TOKEN = `${REALM}, error="invalid_token", error_description="The API key is missing, malformed, unknown or revoked"`;
const STATE_RETRY_AFTER = '5';

/** The route whose pages the search cache keeps. */
const SEARCH_PATH = '/v1/health/plans';

export interface Route {
  readonly pattern: string;
  readonly op: Operation<never>;
  readonly serializer: (body: Record<string, unknown>) => string | Buffer;
  /**
   * Which cache keeps finished 200s: 'response' for `cacheable` operations (by canonical request),
   * 'search' for plan search (by request text, its own budget HPD_SEARCH_CACHE_MB), null for none.
   */
  readonly cache: 'response' | 'search' | null;
  /** The path template counted in /metrics and the access log. */
  readonly label: Label;
}

/**
 * One route per operation, plus the overview table's `/zip/{zip}` spelling of the ZIP lookup
 * (docs/compatibility.md#zip-lookup). Collections of plan summaries (search, compare) are written from pre-serialized
 * plan fragments: ~10× faster than either serializer on a 25-plan page (bench/search.bench.ts), same bytes.
 */
export function buildRoutes(): Route[] {
  // Plan summaries are the `_embedded.plans` of search and compare; other collections (dental plans)
  // have no fragments and take the schema's serializer.
  const embedsPlans = (op: Operation<never>): boolean => {
    const embedded = (op.responseSchema.properties as Record<string, { properties?: object }> | undefined)?._embedded;
    return embedded?.properties !== undefined && 'plans' in embedded.properties;
  };
  const serializerFor = (op: Operation<never>): Route['serializer'] =>
    embedsPlans(op) ? fragmentSerializer((b) => JSON.stringify(b)) : compileSerializer(op.responseSchema);
  const routes: Route[] = OPERATIONS.flatMap((op) =>
    [op.path, ...(op.aliasPaths ?? [])].map((path) => ({
      pattern: path.replace(/\{(\w+)\}/g, ':$1'),
      op,
      serializer: serializerFor(op),
      cache: op.cacheable === true ? 'response' : op.path === SEARCH_PATH ? 'search' : null,
      label: { id: RequestMetrics.routeId('rest', path), template: path },
    })),
  );
  return routes;
}

/**
 * Percent-decodes a path parameter. A malformed escape (`%ZZ`) is kept as sent, so validation answers
 * it (400 for a ZIP, 404 for a plan id); decodeURIComponent would throw inside the uWS handler and
 * take the whole process down.
 */
function decodePathParam(raw: string): string {
  // Plan ids and ZIPs arrive plain: decoding them would only copy the string.
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** What a request carries past routing, copied out of uWS's request (valid only during the handler). */
interface Incoming {
  route: Route;
  path: string;
  rawQuery: string;
  authorization: string;
  accept: string;
  ifNoneMatch: string;
  acceptEncoding: string;
  pathParams: Record<string, string>;
}

type Answer = Reply | OkReply;

/** A request waiting for an asynchronous quota decision, with its own copy of what it carries. */
interface Pending {
  readonly incoming: Incoming;
  readonly tier: Tier;
  readonly counted: Promise<QuotaDecision>;
}

/**
 * What a REST request reuses from its scratch (request-scratch.ts): the request as copied out of uWS,
 * the buffers a page model is written into, the ETag, and the 200 itself. Valid while the request holds
 * the scratch, which it does until its answer has been handed to uWS.
 */
class RestScratch {
  readonly incoming: Incoming = {
    route: undefined as unknown as Route,
    path: '',
    rawQuery: '',
    authorization: '',
    accept: '',
    ifNoneMatch: '',
    acceptEncoding: '',
    pathParams: {},
  };
  readonly pageBody = new ByteWriter(1 << 16);
  readonly pageLink = new ByteWriter(1 << 12);
  /** The ETag, rewritten in place: its length is fixed by the build version, so one buffer per version serves. */
  etagVersion = '';
  etag = Buffer.alloc(0);
  readonly response: Mutable<CachedResponse> = {
    etag: Buffer.alloc(0),
    link: Buffer.alloc(0),
    body: Buffer.alloc(0),
    bytes: 0,
    tier: 'free',
    variants: null,
  };
  readonly ok: Mutable<OkReply> = {
    response: undefined as unknown as CachedResponse,
    quota: undefined as unknown as QuotaDecision,
    notModified: false,
    coding: null,
  };
}

const REST_SCRATCH = scratchPart('REST response', () => new RestScratch());

/** The path parameters of a route that has none (never written to). */
const NO_PATH_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * Admits a search page to the cache on its second sighting only. Under a Zipf mix most distinct
 * searches come once; caching them copied every page (17 KB), evicted a useful one, and left old-space
 * garbage: measured (bench/cpu-per-request.ts --zipf 1, 119k distinct URLs, 32 MiB) 52 % hits saved
 * only ~3 % CPU per request before this filter. 65,536 remembered 32-bit hashes of request texts (256 KiB
 * a thread, fixed); a collision only admits a page early or forgets a sighting.
 */
class Doorkeeper {
  readonly #slots = new Uint32Array(1 << 16);

  /** True when `text` was seen before (and so is worth keeping); remembers it otherwise. */
  admit(text: string): boolean {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    h >>>= 0;
    const slot = h & 0xffff;
    if (this.#slots[slot] === h) return true;
    this.#slots[slot] = h;
    return false;
  }
}

/**
 * The request headers every operation reads, as bytes: uWS converts a string name to UTF-8 on every
 * lookup (~30 ns of the ~100 a lookup costs).
 */
const H = {
  requestId: Buffer.from('x-request-id'),
  authorization: Buffer.from('authorization'),
  accept: Buffer.from('accept'),
  ifNoneMatch: Buffer.from('if-none-match'),
  acceptEncoding: Buffer.from('accept-encoding'),
} as const;

export class OperationPipeline {
  readonly #front: RestFront;
  readonly #config: ServerConfig;
  readonly #auth: AuthCache;
  readonly #caches: { readonly response: ResponseCache<CachedResponse>; readonly search: ResponseCache<CachedResponse> };
  readonly #clock: () => number;
  readonly #searchSeen = new Doorkeeper();
  readonly #scratch: RequestScratch = threadScratch();

  constructor(
    front: RestFront,
    config: ServerConfig,
    caches: { readonly response: ResponseCache<CachedResponse>; readonly search: ResponseCache<CachedResponse> },
  ) {
    this.#front = front;
    this.#config = config;
    this.#caches = caches;
    this.#auth = new AuthCache(config.store);
    this.#clock = config.clock ?? Date.now;
  }

  /**
   * The uWS handler of GET (`head` false) and HEAD on an operation's route. The request holds the
   * thread's scratch from the moment it is read until its answer is handed to uWS.
   */
  handle(route: Route, res: HttpResponse, req: HttpRequest, head: boolean): void {
    const t0 = performance.now();
    // null: an id was generated, and is made a string only where one is needed (request-id.ts).
    const given = givenRequestId(req.getHeader(H.requestId));
    const path = req.getUrl();
    const scratch = this.#scratch;
    let reply: Answer | Pending;
    let borrowed = false;
    try {
      scratch.borrow();
      borrowed = true;
      const incoming = scratch.part(REST_SCRATCH).incoming;
      const names = route.op.pathParams;
      const pathParams: Record<string, string> = names.length === 0 ? NO_PATH_PARAMS : {};
      for (let i = 0; i < names.length; i++) pathParams[names[i]!] = decodePathParam(req.getParameter(i) ?? '');
      incoming.route = route;
      incoming.path = path;
      incoming.rawQuery = req.getQuery() ?? '';
      incoming.authorization = req.getHeader(H.authorization);
      incoming.accept = req.getHeader(H.accept);
      incoming.ifNoneMatch = req.getHeader(H.ifNoneMatch);
      incoming.acceptEncoding = req.getHeader(H.acceptEncoding);
      incoming.pathParams = pathParams;
      reply = this.#respond(incoming, scratch);
    } catch (err) {
      reply = this.#internal(err, given ?? generatedRequestId(), path);
    }
    try {
      if ('counted' in reply) this.#later(res, reply, head, given ?? generatedRequestId(), t0);
      else this.#send(res, route, path, reply, head, given, t0, true);
    } finally {
      if (borrowed) scratch.release();
    }
  }

  /**
   * Answers a request whose quota decision comes in a later turn: then it borrows the scratch again,
   * for the answer and its writing. Its own method: the closures it needs made `handle` allocate their
   * context on every request.
   */
  #later(res: HttpResponse, pending: Pending, head: boolean, requestId: string, t0: number): void {
    const { route, path } = pending.incoming;
    // Writing to an aborted response would crash uWS.
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    pending.counted.then(
      (decision) => {
        if (aborted) return;
        const scratch = this.#scratch.borrow();
        try {
          let reply: Answer;
          try {
            reply = this.#answer(pending.incoming, pending.tier, decision, scratch);
          } catch (err) {
            reply = this.#internal(err, requestId, path);
          }
          this.#send(res, route, path, reply, head, requestId, t0);
        } finally {
          scratch.release();
        }
      },
      (err: unknown) => {
        if (!aborted) this.#send(res, route, path, this.#internal(err, requestId, path), head, requestId, t0);
      },
    );
  }

  /** The 500 of an unexpected error (logged with the request id). */
  #internal(err: unknown, requestId: string, path: string): Reply {
    this.#front.onError(err, requestId);
    return this.#front.problemReply(INTERNAL_ERROR, path);
  }

  /**
   * `requestId` null: the thread's generated id (request-id.ts), written as bytes. `inHandler`: called
   * in the uWS handler's own turn, where the response is corked already.
   */
  #send(
    res: HttpResponse,
    route: Route,
    path: string,
    reply: Answer,
    head: boolean,
    requestId: string | null,
    t0: number,
    inHandler = false,
  ): void {
    const front = this.#front;
    if ('response' in reply) writeOk(res, reply, head, requestId, front.draining, inHandler);
    else front.write(res, reply, head, requestId ?? generatedRequestId());
    const status = 'response' in reply ? (reply.notModified ? 304 : 200) : reply.status;
    front.observe(route.label, status, t0, requestId, head ? 'HEAD' : 'GET', path);
  }

  /** Negotiation, authentication and counting, then {@link answer}. */
  #respond(r: Incoming, scratch: RequestScratch): Answer | Pending {
    const front = this.#front;
    const metrics = this.#config.metrics;
    if (!acceptsJson(r.accept)) return front.problemReply(NOT_ACCEPTABLE, r.path);
    const who = this.#auth.authenticate(r.authorization, this.#clock());
    if (!who.ok) {
      metrics?.authFailed('rest', who.reason);
      if (who.reason === 'unavailable') return front.problemReply(STATE_UNAVAILABLE, r.path, [['retry-after', STATE_RETRY_AFTER]]);
      if (who.reason === 'missing')
        return front.problemReply(missingCredential(queryPairs(r.rawQuery)), r.path, [['www-authenticate', REALM]]);
      return front.problemReply(UNAUTHORIZED, r.path, [['www-authenticate', INVALID_TOKEN]]);
    }
    const counted = this.#config.quota.consume(who.userId, who.tier);
    // The request waits outside the scratch: it takes a copy of what it carries.
    if (counted instanceof Promise) return { incoming: { ...r }, tier: who.tier, counted };
    return this.#answer(r, who.tier, counted, scratch);
  }

  #countLookup(route: Route, hit: boolean): void {
    if (route.cache === 'search') this.#config.metrics?.searchCacheLookup(hit);
    else this.#config.metrics?.cacheLookup(hit);
  }

  /** A request past authentication and counting: the operation's answer (from a cache when it can). */
  #answer(r: Incoming, tier: Tier, decision: QuotaDecision, scratch: RequestScratch): Answer {
    const { route, path, rawQuery, pathParams } = r;
    if (!decision.allowed) {
      this.#config.metrics?.quotaRefused(tier);
      return this.#front.problemReply(RATE_LIMITED, path, rateLimitHeaders(decision));
    }
    const rs = scratch.part(REST_SCRATCH);
    const cache = route.cache === null ? null : this.#caches[route.cache];
    // Within a build a cached request always gets the same 200; what depends on the caller is the tier
    // (the endpoint's, and search's Pro parameters), so an entry records the lowest tier that has been
    // allowed to get it and serves no caller below. A request text seen before skips validation; any
    // other is validated and then found by its canonical form.
    // The request as sent: the path names the route and carries its parameters as spelled, so a
    // request without a query string is looked up by the path uWS already gave us (no text is made).
    const spelling = cache?.enabled !== true ? '' : rawQuery === '' ? path : `${path}?${rawQuery}`;
    const hit = cache?.enabled === true ? cache.bySpelling(spelling) : undefined;
    if (hit !== undefined && TIER_RANK[tier] >= TIER_RANK[hit.tier]) {
      this.#countLookup(route, true);
      return okReply(hit, r, decision, rs);
    }
    // One snapshot for the whole request (src/operations/live-registry.ts).
    const c = this.#front.ctx;
    const result = execute(route.op, c, tier, rawQuery, pathParams, scratch);
    if (!result.ok) return this.#front.problemReply(result.problem, path, rateLimitHeaders(decision));
    // A search page echoes the request as spelled (its self link, `page_size`), so two spellings of one
    // canonical request can differ in bytes: search pages are kept by spelling alone.
    // The canonical text is made only for the cache that is keyed by it.
    const key = cache?.enabled !== true ? '' : route.cache === 'search' ? spelling : result.canonical;
    const known = cache?.enabled === true && route.cache !== 'search' ? cache.get(key, spelling) : undefined;
    if (cache?.enabled === true) this.#countLookup(route, known !== undefined);
    if (known !== undefined) {
      if (TIER_RANK[tier] < TIER_RANK[known.tier]) known.tier = tier;
      return okReply(known, r, decision, rs);
    }
    const keep = cache?.enabled === true && (route.cache !== 'search' || this.#searchSeen.admit(spelling));
    const done = finished(route, c.registry.version, result, this.#front.serviceDesc, tier, keep, rs);
    if (keep) cache?.set(key, spelling, done);
    return okReply(done, r, decision, rs);
  }
}

function currentEtag(rs: RestScratch, version: string, result: Executed): Buffer {
  if (rs.etagVersion !== version) {
    rs.etag = Buffer.from(etagOf(version, '0'.repeat(14)), 'latin1');
    rs.etagVersion = version;
  }
  writeDigest(result.hashA, result.hashB, rs.etag, etagHashAt(version));
  return rs.etag;
}

/**
 * The 200 of an executed request. `keep`: it goes into a cache, so it owns its bytes and is
 * compressed once; otherwise it is made of `rs`'s buffers (or the search serializer's own), and is valid
 * while the request holds the scratch.
 */
function finished(
  route: Route,
  version: string,
  result: Executed,
  serviceDesc: string,
  tier: Tier,
  keep: boolean,
  rs: RestScratch,
): CachedResponse {
  let bytes: Buffer;
  let link: Buffer;
  const model = result.model;
  if (model instanceof SearchPageModel || model instanceof AptcPageModel) {
    if (model instanceof SearchPageModel) writeSearchPage(model, rs.pageBody, rs.pageLink, serviceDesc);
    else writeAptcPage(model, rs.pageBody, rs.pageLink, serviceDesc);
    bytes = keep ? Buffer.from(rs.pageBody.view()) : rs.pageBody.exactView();
    link = keep ? Buffer.from(rs.pageLink.view()) : rs.pageLink.exactView();
  } else {
    const body = result.body;
    link = Buffer.from(linkHeader(body._links, serviceDesc));
    const serialized = route.serializer(body);
    if (keep) bytes = Buffer.from(serialized);
    else if (typeof serialized !== 'string') bytes = serialized;
    else {
      // Encoded into the scratch's page buffer rather than a new Buffer per response.
      rs.pageBody.reset();
      rs.pageBody.utf8(serialized);
      bytes = rs.pageBody.exactView();
    }
  }
  // An endpoint without Pro parameters is open to every caller of its own tier; otherwise only to
  // callers at least as high as the one who asked, until a lower tier is allowed the same request.
  const needs = route.op.proParams === undefined ? route.op.tier : tier;
  if (!keep) {
    const r = rs.response;
    r.etag = currentEtag(rs, version, result);
    r.link = link;
    r.body = bytes;
    r.bytes = 0;
    r.tier = needs;
    r.variants = null;
    return r;
  }
  const etag = Buffer.from(etagOf(version, result.hash), 'latin1');
  // Immutable responses kept in the response cache are compressed once, here (compression.ts); search
  // pages never are.
  const variants = route.cache === 'response' ? compressVariants(bytes) : null;
  const size = bytes.byteLength + etag.length + 2 * link.length + (variants === null ? 0 : variantBytes(variants));
  return { etag, link, body: bytes, bytes: size, tier: needs, variants };
}

/** The 200 of `response` for request `r`: the scratch's record, written out before the scratch is returned. */
function okReply(response: CachedResponse, r: Incoming, quota: QuotaDecision, rs: RestScratch): OkReply {
  const notModified = ifNoneMatchMatches(r.ifNoneMatch, response.etag);
  const coding = notModified || response.variants === null ? null : chooseCoding(r.acceptEncoding, response.variants);
  const ok = rs.ok;
  ok.response = response;
  ok.quota = quota;
  ok.notModified = notModified;
  ok.coding = coding;
  return ok;
}
