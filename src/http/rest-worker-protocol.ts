/**
 * @module The messages between the REST acceptor (main thread, src/http/rest-pool.ts) and its worker
 * threads (src/http/rest-worker.ts). Kept in one place so both sides agree at compile time.
 */
import type { YearImage } from '../operations/data-registry.ts';
import type { Tier } from '../policy/tiers.ts';
import type { LogLevel } from '../observability/logger.ts';
import type { MetricCellsDescriptor } from '../observability/metric-cells.ts';

/** What a worker needs to serve REST: the builds the main thread opened, and its own state store handle. */
export interface RestWorkerData {
  readonly index: number;
  /** The years to serve, opened and verified by the main thread (shared memory). */
  readonly years: readonly YearImage[];
  readonly stateDir: string;
  readonly baseUrl: string;
  readonly upgradeUrl: string;
  readonly limits: Readonly<Record<Tier, number>>;
  /** This worker's share of the REST connection cap. */
  readonly maxConnections: number;
  /** Connections one address may hold (every worker counts against the same limit); 0: no limit. */
  readonly maxConnectionsPerAddress?: number;
  /** HPD_TRUSTED_PROXIES: peers whose PROXY protocol v2 header names the client. */
  readonly trustedProxies?: readonly string[];
  /** One Int32 the acceptor sets to its listening port once it listens (the census needs it). */
  readonly port: SharedArrayBuffer;
  /** Worker threads of the pool. */
  readonly threads: number;
  readonly responseCacheBytes?: number;
  readonly searchCacheBytes?: number;
  /** The shared quota table (SharedArrayBuffers travel by reference); null when the state is on Redis. */
  readonly quota: unknown;
  /** Shared state on Redis: the worker opens its own link, replica and leased quota. */
  readonly redisUrl?: string;
  readonly redisGraceMs?: number;
  /** The request counters every thread adds to (/metrics); absent: nothing is counted. */
  readonly metrics?: MetricCellsDescriptor;
  /** Access log rate (src/observability/access-log.ts); 0 or absent: off. */
  readonly accessLog?: number;
  /** JSON log level of this thread; absent: no JSON logs. */
  readonly logLevel?: LogLevel;
}

export type ToWorker =
  /** Serve these builds from now on (the main thread adopted a newly published one). */
  | { readonly type: 'follow'; readonly years: readonly YearImage[] }
  /** Fail readiness; keep serving. */
  | { readonly type: 'drain' }
  /** Stop, let responses being written finish for up to `graceMs` (default 0), close the app and end the thread. */
  | { readonly type: 'close'; readonly graceMs?: number }
  /** Fault injection (tests, drills): raise an unexpected error in the worker, as a bug would. */
  | { readonly type: 'fail' };

export type FromWorker =
  /** Serving: hand connections to this app descriptor. */
  | { readonly type: 'ready'; readonly descriptor: unknown }
  /** Serving the builds of the last 'follow'. */
  | { readonly type: 'followed' }
  /** About to close its app after an unexpected error: stop handing it connections now. */
  | { readonly type: 'fatal'; readonly message: string };
