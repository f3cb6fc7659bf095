/**
 * @module The messages between the REST acceptor (main thread, src/http/rest-pool.ts) and its worker
 * threads (src/http/rest-worker.ts). Kept in one place so both sides agree at compile time.
 */
import type { Tier } from '../policy/tiers.ts';

/** What a worker needs to serve REST on its own: everything is re-opened in its thread. */
export interface RestWorkerData {
  readonly index: number;
  readonly buildsRoot: string;
  readonly stateDir: string;
  readonly baseUrl: string;
  readonly upgradeUrl: string;
  readonly limits: Readonly<Record<Tier, number>>;
  /** This worker's share of the REST connection cap. */
  readonly maxConnections: number;
  readonly responseCacheBytes?: number;
  /** The shared quota table (SharedArrayBuffers travel by reference). */
  readonly quota: unknown;
}

export type ToWorker =
  /** Adopt newly published builds (the main thread's watcher or SIGHUP saw one). */
  | { readonly type: 'reload' }
  /** Fail readiness; keep serving. */
  | { readonly type: 'drain' }
  /** Close the app and end the thread. */
  | { readonly type: 'close' }
  /** Fault injection (tests, drills): raise an unexpected error in the worker, as a bug would. */
  | { readonly type: 'fail' };

export type FromWorker =
  /** Serving: hand connections to this app descriptor. */
  | { readonly type: 'ready'; readonly descriptor: unknown }
  /** Done with a 'reload' (adopted or not): the next worker may start its own. */
  | { readonly type: 'reloaded' }
  /** About to close its app after an unexpected error: stop handing it connections now. */
  | { readonly type: 'fatal'; readonly message: string };
