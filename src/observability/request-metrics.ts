/**
 * @module What the fronts count, laid out once over {@link MetricCells}: requests by front, route and
 * status, a latency histogram per route, quota refusals by tier, authentication failures by reason and
 * response-cache lookups.
 *
 * Every label set is fixed here, before any request: routes are the operations' path templates (never
 * the raw path, which would make one series per ZIP or plan id), statuses a fixed list plus "other".
 * A fixed layout is what lets every thread write the same cells and the main thread name them.
 */
import { OPERATIONS } from '../operations/index.ts';
import { TIERS, type Tier } from '../policy/tiers.ts';
import { MetricCells, type MetricCellsDescriptor } from './metric-cells.ts';

export const FRONTS = ['rest', 'mcp', 'auth'] as const;
export type Front = (typeof FRONTS)[number];

/** Requests that match no known route are counted under this route label. */
export const OTHER_ROUTE = 'other';

/** Route labels of each front, in cell order. */
export const ROUTES: Readonly<Record<Front, readonly string[]>> = {
  rest: [
    ...OPERATIONS.flatMap((op) => [op.path, ...(op.aliasPaths ?? [])]),
    '/v1/openapi.json',
    '/healthz',
    '/readyz',
    '/problems/{slug}',
    '/',
    '/docs',
    '/docs/init.js',
    '/pricing',
    OTHER_ROUTE,
  ],
  mcp: ['/mcp', '/.well-known/oauth-protected-resource', '/healthz', '/readyz', OTHER_ROUTE],
  auth: ['/healthz', '/readyz', OTHER_ROUTE],
};

/** Statuses the fronts answer; anything else is counted as "other". */
export const STATUSES = [200, 201, 204, 302, 303, 304, 400, 401, 402, 403, 404, 405, 406, 408, 413, 429, 431, 500, 503] as const;
export const OTHER_STATUS = 'other';

/** Upper bounds (seconds) of the latency buckets; +Inf is implied. Handlers run in µs, slow pages in ms. */
export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1] as const;

export const AUTH_REASONS = ['missing', 'invalid', 'unavailable'] as const;
export type AuthFailureReason = (typeof AUTH_REASONS)[number];
/** Fronts that authenticate callers themselves (the authorization server counts its own logins). */
export const AUTH_FRONTS = ['rest', 'mcp'] as const;

/** One route's cells: a count per status, then the (non-cumulative) latency buckets with +Inf, then the sum. */
const STATUS_CELLS = STATUSES.length + 1;
const BUCKET_CELLS = LATENCY_BUCKETS.length + 1;
const ROUTE_CELLS = STATUS_CELLS + BUCKET_CELLS + 1;

interface RouteSlot {
  readonly front: Front;
  readonly route: string;
  readonly base: number;
}

const ROUTE_SLOTS: readonly RouteSlot[] = FRONTS.flatMap((front) => ROUTES[front].map((route) => ({ front, route }))).map((r, i) => ({
  ...r,
  base: i * ROUTE_CELLS,
}));
const QUOTA_BASE = ROUTE_SLOTS.length * ROUTE_CELLS;
const AUTH_BASE = QUOTA_BASE + TIERS.length;
const CACHE_BASE = AUTH_BASE + AUTH_FRONTS.length * AUTH_REASONS.length;
/** Response-cache hit and miss, then search-cache hit and miss. */
const CELLS = CACHE_BASE + 4;

const STATUS_INDEX = new Map<number, number>(STATUSES.map((s, i) => [s, i]));
const ROUTE_ID = new Map<string, number>(ROUTE_SLOTS.map((r, i) => [`${r.front} ${r.route}`, i]));

/** A sample of a counter or gauge: labels and value. */
export interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A histogram's series for one label set, buckets cumulative as the exposition format wants them. */
export interface HistogramSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly buckets: ReadonlyArray<readonly [le: string, count: number]>;
  readonly sum: number;
  readonly count: number;
}

export interface RequestSnapshot {
  readonly requests: readonly Sample[];
  readonly latency: readonly HistogramSample[];
  readonly quotaRefusals: readonly Sample[];
  readonly authFailures: readonly Sample[];
  readonly cacheLookups: readonly Sample[];
  readonly searchCacheLookups: readonly Sample[];
}

export class RequestMetrics {
  readonly #cells: MetricCells;

  private constructor(cells: MetricCells) {
    this.#cells = cells;
  }

  /** The cells for `threads` threads, written by this one as row 0. */
  static create(threads: number): RequestMetrics {
    return new RequestMetrics(MetricCells.create(CELLS, threads));
  }

  /** In a REST worker: the main thread's cells, writing row `thread`. */
  static attach(d: MetricCellsDescriptor, thread: number): RequestMetrics {
    return new RequestMetrics(MetricCells.attach(d, thread));
  }

  get descriptor(): MetricCellsDescriptor {
    return this.#cells.descriptor;
  }

  /** The id to pass to {@link request}; unknown routes share the front's "other". */
  static routeId(front: Front, route: string): number {
    return ROUTE_ID.get(`${front} ${route}`) ?? ROUTE_ID.get(`${front} ${OTHER_ROUTE}`)!;
  }

  /** One answered request: its status and how long the front took (seconds). */
  request(routeId: number, status: number, seconds: number): void {
    const base = ROUTE_SLOTS[routeId]!.base;
    this.#cells.add(base + (STATUS_INDEX.get(status) ?? STATUSES.length));
    let b = 0;
    while (b < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[b]!) b++;
    this.#cells.add(base + STATUS_CELLS + b);
    this.#cells.add(base + STATUS_CELLS + BUCKET_CELLS, seconds);
  }

  quotaRefused(tier: Tier): void {
    this.#cells.add(QUOTA_BASE + TIERS.indexOf(tier));
  }

  authFailed(front: (typeof AUTH_FRONTS)[number], reason: AuthFailureReason): void {
    this.#cells.add(AUTH_BASE + AUTH_FRONTS.indexOf(front) * AUTH_REASONS.length + AUTH_REASONS.indexOf(reason));
  }

  cacheLookup(hit: boolean): void {
    this.#cells.add(CACHE_BASE + (hit ? 0 : 1));
  }

  /** A lookup of the search cache (HPD_SEARCH_CACHE_MB), counted apart: its hit rate is a tuning figure. */
  searchCacheLookup(hit: boolean): void {
    this.#cells.add(CACHE_BASE + (hit ? 2 : 3));
  }

  /** Every series summed over the threads. Series never used are left out, except the fixed small sets. */
  snapshot(): RequestSnapshot {
    const c = this.#cells;
    const requests: Sample[] = [];
    const latency: HistogramSample[] = [];
    for (const r of ROUTE_SLOTS) {
      let count = 0;
      for (let s = 0; s < STATUS_CELLS; s++) {
        const v = c.sum(r.base + s);
        if (v === 0) continue;
        count += v;
        requests.push({
          labels: { front: r.front, route: r.route, status: s < STATUSES.length ? String(STATUSES[s]) : OTHER_STATUS },
          value: v,
        });
      }
      if (count === 0) continue;
      let cumulative = 0;
      const buckets: Array<[string, number]> = [];
      for (let b = 0; b < BUCKET_CELLS; b++) {
        cumulative += c.sum(r.base + STATUS_CELLS + b);
        buckets.push([b < LATENCY_BUCKETS.length ? String(LATENCY_BUCKETS[b]) : '+Inf', cumulative]);
      }
      latency.push({
        labels: { front: r.front, route: r.route },
        buckets,
        sum: c.sum(r.base + STATUS_CELLS + BUCKET_CELLS),
        count: cumulative,
      });
    }
    return {
      requests,
      latency,
      quotaRefusals: TIERS.map((tier, i) => ({ labels: { tier }, value: c.sum(QUOTA_BASE + i) })),
      authFailures: AUTH_FRONTS.flatMap((front, f) =>
        AUTH_REASONS.map((reason, i) => ({ labels: { front, reason }, value: c.sum(AUTH_BASE + f * AUTH_REASONS.length + i) })),
      ),
      cacheLookups: [
        { labels: { result: 'hit' }, value: c.sum(CACHE_BASE) },
        { labels: { result: 'miss' }, value: c.sum(CACHE_BASE + 1) },
      ],
      searchCacheLookups: [
        { labels: { result: 'hit' }, value: c.sum(CACHE_BASE + 2) },
        { labels: { result: 'miss' }, value: c.sum(CACHE_BASE + 3) },
      ],
    };
  }
}
