/**
 * @module /healthz and /readyz for the `node:http` listeners (MCP, authorization server), with the
 * REST front's bodies and statuses (src/http/server.ts): liveness is always 200 `{"status":"ok"}`;
 * readiness is 200 when ready, degraded (Redis unreachable) or lost (Redis emptied or holding another
 * dataset): known keys are still served then, and taking every instance out of a balancer would turn
 * a Redis incident into a total outage. The body's status says which, and operators are told by the
 * log line and the `hpd_state_store_health` metric. 503 when draining or unavailable (past the grace).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DataRegistry } from '../operations/data-registry.ts';
import type { StateStore } from '../policy/state-store.ts';

export type Readiness = 'draining' | 'ready' | 'degraded' | 'lost' | 'unavailable';

export interface HealthProbes {
  /** Answers GET/HEAD /healthz and /readyz and returns true; false for any other request. */
  answer(req: IncomingMessage, res: ServerResponse, path: string): boolean;
  /** Readiness fails from now on (shutdown). */
  drain(): void;
  readiness(): Readiness;
}

export const HEALTH_BODY = '{"status":"ok"}';

/** Readiness of a listener from its drain state and the state store's health (every front alike). */
export function readinessOf(draining: boolean, store: Pick<StateStore, 'health'>): Readiness {
  if (draining) return 'draining';
  const h = store.health();
  return h === 'ok' ? 'ready' : h;
}

/** The /readyz status and body of a readiness, with the builds served. */
export function readyzAnswer(state: Readiness, r: DataRegistry): { readonly status: number; readonly body: string } {
  return {
    status: state === 'draining' || state === 'unavailable' ? 503 : 200,
    body: JSON.stringify({ status: state, years: r.years, build: r.version, builds: r.builds }),
  };
}

export function createHealthProbes(o: { readonly store: Pick<StateStore, 'health'>; readonly registry: () => DataRegistry }): HealthProbes {
  let draining = false;
  const readiness = (): Readiness => readinessOf(draining, o.store);
  return {
    answer(req, res, path) {
      if (path !== '/healthz' && path !== '/readyz') return false;
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      let status = 200;
      let body = HEALTH_BODY;
      if (path === '/readyz') ({ status, body } = readyzAnswer(readiness(), o.registry()));
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-cache', 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
      return true;
    },
    drain() {
      draining = true;
    },
    readiness,
  };
}
