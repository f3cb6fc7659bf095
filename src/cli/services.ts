/**
 * @module Starting and stopping the whole service: REST, MCP and (unless an external issuer is
 * configured) the embedded authorization server, sharing one data registry, one state store and one
 * daily quota, so a user's counter is the same whichever front they call. Used by `hpd serve` and by the
 * end-to-end tests, which therefore exercise exactly what operators run.
 */
import type { AuthServer } from '../auth-server/index.ts';
import { DEFAULT_DRAIN_MS, type ListenerLimits } from '../http/node-listener.ts';
import { startRestPool, type RestPool } from '../http/rest-pool.ts';
import { createRestServer, DEFAULT_REST_MAX_CONNECTIONS, type RestServer } from '../http/server.ts';
import { TrustedProxies } from '../http/trusted-proxies.ts';
import { createCredentialVerifier } from '../mcp/credentials.ts';
import { createMcpServer, type McpHttpServer } from '../mcp/server.ts';
import type { DataRegistry } from '../operations/data-registry.ts';
import { createLiveRegistry, imagesOf, type LiveRegistry, type ReloadResult } from '../operations/live-registry.ts';
import { DailyQuota, type Quota } from '../policy/quota.ts';
import { SharedDailyQuota } from '../policy/shared-quota.ts';
import { openStateBackend, type StateBackend } from '../policy/state-backend.ts';
import type { StateStore } from '../policy/state-store.ts';
import type { Tier } from '../policy/tiers.ts';
import { ConfigError } from '../config/config-error.ts';
import { watchBuilds } from './build-watcher.ts';
import { createAccessLog, type AccessLog } from '../observability/access-log.ts';
import { createHealthProbes, type HealthProbes } from '../observability/health-probes.ts';
import { flushLogger, type Logger, type LogLevel } from '../observability/logger.ts';
import { createMetricsExposition } from '../observability/metrics-exposition.ts';
import { startMetricsServer, type MetricsServer } from '../http/metrics-server.ts';
import { watchStoreHealth } from '../observability/store-health-watch.ts';
import { RequestMetrics } from '../observability/request-metrics.ts';

export interface ServicesConfig {
  readonly buildsRoot: string;
  readonly stateDir: string;
  readonly host: string;
  /** REST port and absolute origin for links. */
  readonly restPort: number;
  readonly baseUrl: string;
  readonly upgradeUrl: string;
  /** MCP port and resource identifier (the endpoint URL, e.g. http://127.0.0.1:8081/mcp). */
  readonly mcpPort: number;
  readonly mcpUrl: string;
  /** Embedded authorization server port and issuer; ignored when `externalIssuer` is set. */
  readonly authPort: number;
  readonly authUrl: string;
  /** An external issuer replacing the embedded authorization server. */
  readonly externalIssuer?: string;
  readonly limits: Readonly<Record<Tier, number>>;
  readonly allowedOrigins?: readonly string[];
  readonly mcpIdleMs?: number;
  readonly clock?: () => number;
  readonly version?: string;
  /** The embedded authorization server's sign-up allowance (HPD_SIGNUPS_PER_HOUR; default its default). */
  readonly signupsPerHour?: number;
  /** Timeouts and connection cap of each node:http listener (MCP, authorization server). */
  readonly listenerLimits?: Partial<ListenerLimits>;
  /** Longest time close() takes, from its call to closing what is left; default DEFAULT_DRAIN_MS. */
  readonly drainMs?: number;
  /**
   * The first part of the drain, during which readiness fails but every listener still accepts and
   * serves, so a load balancer's health checks move traffic away first; default 0, at most `drainMs`.
   */
  readonly drainNoticeMs?: number;
  /** Concurrent connections on the REST listener (default DEFAULT_REST_MAX_CONNECTIONS). */
  readonly restMaxConnections?: number;
  /** REST connections one address may hold (default DEFAULT_REST_MAX_CONNECTIONS_PER_ADDRESS; 0: no limit). */
  readonly restMaxConnectionsPerAddress?: number;
  /** HPD_TRUSTED_PROXIES: peers whose PROXY protocol v2 header names the client, on REST, MCP and auth. */
  readonly trustedProxies?: readonly string[];
  /** Byte budget of the REST response cache (default DEFAULT_RESPONSE_CACHE_BYTES). */
  readonly responseCacheBytes?: number;
  /** Byte budget of the REST search cache, per thread (default DEFAULT_SEARCH_CACHE_BYTES). */
  readonly searchCacheBytes?: number;
  /** Watch the builds root and adopt newly published builds (default true). */
  readonly watchBuilds?: boolean;
  /** REST worker threads; 0 (the default here) serves REST from this thread. `hpd serve` defaults to the cores. */
  readonly workers?: number;
  /** Shared state on Redis (several instances); absent: the embedded store in `stateDir`. */
  readonly redisUrl?: string;
  /** How long known keys are served while Redis is unreachable (default 5 min). */
  readonly redisGraceMs?: number;
  /** Port of the /metrics listener (0: any free one); absent: no /metrics, and nothing is counted. */
  readonly metricsPort?: number;
  /** Interface of the /metrics listener (default 127.0.0.1: metrics stay private unless chosen otherwise). */
  readonly metricsHost?: string;
  /** Structured JSON logs (src/observability/logger.ts); absent: none. */
  readonly logger?: Logger;
  /** Share of requests in the access log: 0 (default) none, 1 all. Needs `logger`. */
  readonly accessLog?: number;
}

export interface Services {
  /** The builds served, following publications. */
  readonly live: LiveRegistry;
  /** The snapshot served now. */
  readonly registry: DataRegistry;
  /** Adopts builds published since (SIGHUP, `hpd reload`); the watcher calls it too. */
  reload(): ReloadResult;
  readonly store: StateStore;
  readonly quota: Quota;
  /** The REST worker pool, when REST runs in worker threads. */
  readonly restPool: RestPool | null;
  readonly restPort: number;
  readonly mcpPort: number;
  /** Issuer the MCP server trusts (embedded or external). */
  readonly issuer: string;
  /** The embedded authorization server, when running. */
  readonly auth: AuthServer | null;
  /** The /metrics listener's port, or null when metrics are off. */
  readonly metricsPort: number | null;
  /**
   * Fails readiness on every listener at once and keeps serving for `drainNoticeMs` (REST answers with
   * `Connection: close`), then stops accepting everywhere, lets what is in flight finish until `drainMs`
   * after the call, closes every connection left, then the state. Idempotent.
   */
  close(): Promise<void>;
}

/** The state store; the registry opened before it is closed again when the store cannot be opened. */
async function openBackend(c: ServicesConfig, live: LiveRegistry): Promise<StateBackend> {
  try {
    return await openStateBackend({
      stateDir: c.stateDir,
      redisUrl: c.redisUrl,
      redisGraceMs: c.redisGraceMs,
      clock: c.clock,
      name: 'main thread',
      recordEpoch: true,
    });
  } catch (err) {
    live.close();
    throw err;
  }
}

/** Adopts newly published builds: the main thread opens and verifies each once; REST workers attach to it. */
function reloader(live: LiveRegistry, logger: Logger | undefined, pool: () => RestPool | null): () => ReloadResult {
  return () => {
    const r = live.reload();
    // The human lines (stderr) come from the registry itself; these are the same events for log pipelines.
    for (const a of r.adopted)
      logger?.info({ event: 'build.adopted', year: a.year, build: a.to, previous: a.from }, `serving ${a.year}/${a.to.slice(0, 12)}`);
    for (const f of r.refused)
      logger?.warn({ event: 'build.refused', year: f.year, reason: f.reason }, `not adopting a build of ${f.year}: ${f.reason}`);
    if (r.adopted.length > 0) void pool()?.follow(imagesOf(live.current()));
    return r;
  };
}

export async function startServices(c: ServicesConfig): Promise<Services> {
  // The data first: a damaged build is refused before the state store and the quota's timers exist,
  // so the process exits with the integrity error instead of lingering on open handles.
  const logger = c.logger;
  const live = createLiveRegistry(c.buildsRoot, c.baseUrl);
  const backend = await openBackend(c, live);
  const store = backend.store;
  const workers = c.workers ?? 0;
  // On Redis, every thread (this one, each REST worker) leases its own blocks of each user's allowance.
  // Embedded, with REST workers, every thread counts in one shared table this thread owns and persists.
  const shared = backend.redis === null && workers > 0 ? SharedDailyQuota.open(store, c.limits, c.clock) : null;
  const quota: Quota = backend.leasedQuota(c.limits, c.clock) ?? shared ?? DailyQuota.open(store, c.limits, c.clock);
  let pool: RestPool | null = null;
  const reload = reloader(live, logger, () => pool);
  // Newly published builds are adopted within about a second (tests that publish may turn it off).
  const watcher = c.watchBuilds === false ? null : watchBuilds(c.buildsRoot, () => reload());
  const health = watchStoreHealth(store, { logger });
  // Row 0 of the counters is this thread's (MCP, authorization server, REST without workers); one row per worker.
  const metrics = c.metricsPort === undefined ? undefined : RequestMetrics.create(1 + workers);
  const parts: ServiceParts = {
    live,
    store,
    quota,
    shared,
    backend,
    metrics,
    accessLog: logger === undefined ? undefined : createAccessLog(logger, c.accessLog ?? 0),
    onRequestError: (err, requestId) => {
      logger?.error({ reqId: requestId, err }, 'request failed');
    },
    opened: [
      async () => {
        watcher?.close();
        health.close();
        await quota.close();
        live.close();
        await backend.close();
      },
    ],
  };
  const closeAll = async (): Promise<void> => {
    for (const close of parts.opened.splice(0).reverse()) await close();
  };
  try {
    const rest = await startRest(c, parts, (started) => {
      pool = started;
    });
    const { mcp, auth, issuer, mcpHealth, authHealth } = await startMcpAndAuth(c, parts);
    const mcpPort = await mcp.listen(c.mcpPort, c.host);
    parts.opened.push(() => mcp.close());
    const metricsServer = await startMetrics(c, parts, rest.pool);
    const ports = { restPort: rest.port, mcpPort, authPort: auth?.port ?? null, metricsPort: metricsServer?.port ?? null };
    logger?.info(startedEvent(c, live, ports), 'serving');
    const drainMs = c.drainMs ?? DEFAULT_DRAIN_MS;
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> =>
      (closing ??= (async () => {
        await drainFronts({
          drainMs,
          noticeMs: Math.min(c.drainNoticeMs ?? 0, drainMs),
          readiness: [rest.front, mcpHealth, authHealth],
          fronts: [rest.close, (ms) => mcp.close(ms), ...(auth === null ? [] : [(ms: number) => auth.close(ms)])],
          logger,
        });
        await closeAll();
        logger?.info({ event: 'stopped' }, 'stopped');
        if (logger !== undefined) flushLogger(logger);
      })());
    return {
      live,
      get registry() {
        return live.current();
      },
      reload,
      get restPool() {
        return pool;
      },
      store,
      quota,
      restPort: rest.port,
      mcpPort,
      issuer,
      auth,
      metricsPort: metricsServer?.port ?? null,
      close,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/**
 * Readiness fails first while every listener still accepts: a balancer keeps sending requests until
 * its health checks see the 503, and a listener closed before that refuses or resets them. Then every
 * front stops accepting and gets what is left of `drainMs` for the requests in flight.
 */
async function drainFronts(o: {
  readonly drainMs: number;
  readonly noticeMs: number;
  readonly readiness: ReadonlyArray<{ drain(): void }>;
  readonly fronts: ReadonlyArray<(graceMs: number) => Promise<void>>;
  readonly logger: Logger | undefined;
}): Promise<void> {
  const signalled = performance.now();
  for (const r of o.readiness) r.drain();
  o.logger?.info({ event: 'stopping', drainMs: o.drainMs, noticeMs: o.noticeMs }, 'draining');
  if (o.noticeMs > 0) await new Promise<void>((resolve) => setTimeout(resolve, o.noticeMs));
  const left = Math.max(0, o.drainMs - (performance.now() - signalled));
  await Promise.all(o.fronts.map((close) => close(left)));
}

/** The structured log event of a started service. */
function startedEvent(c: ServicesConfig, live: LiveRegistry, ports: Readonly<Record<string, number | null>>): Record<string, unknown> {
  const { years, builds } = live.current();
  return { event: 'started', ...ports, workers: c.workers ?? 0, years, builds, state: c.redisUrl === undefined ? 'embedded' : 'redis' };
}

/** What the fronts share, and the closers of what is open so far (closed in reverse order). */
interface ServiceParts {
  readonly live: LiveRegistry;
  readonly store: StateStore;
  readonly quota: Quota;
  /** The quota table shared with REST workers (embedded state with workers), else null. */
  readonly shared: SharedDailyQuota | null;
  readonly backend: StateBackend;
  readonly metrics: RequestMetrics | undefined;
  readonly accessLog: AccessLog | undefined;
  readonly onRequestError: (err: unknown, requestId?: string) => void;
  readonly opened: Array<() => Promise<void>>;
}

/**
 * REST in worker threads (`workers` > 0) or on this thread, listening. `onPool` gets the pool before
 * it listens, so a build adopted meanwhile is already passed on to the workers.
 */
async function startRest(
  c: ServicesConfig,
  parts: ServiceParts,
  onPool: (pool: RestPool) => void,
): Promise<{ front: { drain(): void }; close(graceMs: number): Promise<void>; port: number; pool: RestPool | null }> {
  const { live, metrics } = parts;
  const logger = c.logger;
  const workers = c.workers ?? 0;
  if (workers > 0) {
    const pool = await startRestPool({
      workers,
      maxConnections: c.restMaxConnections ?? DEFAULT_REST_MAX_CONNECTIONS,
      maxConnectionsPerAddress: c.restMaxConnectionsPerAddress,
      years: () => imagesOf(live.current()),
      worker: {
        stateDir: c.stateDir,
        baseUrl: c.baseUrl,
        upgradeUrl: c.upgradeUrl,
        limits: c.limits,
        trustedProxies: c.trustedProxies,
        responseCacheBytes: c.responseCacheBytes,
        searchCacheBytes: c.searchCacheBytes,
        quota: parts.shared?.descriptor() ?? null,
        redisUrl: c.redisUrl,
        redisGraceMs: c.redisGraceMs,
        metrics: metrics?.descriptor,
        accessLog: c.accessLog,
        logLevel: logger === undefined ? undefined : (logger.level as LogLevel),
      },
      log: (line) => {
        process.stderr.write(`${line}\n`);
        logger?.warn({ event: 'rest.worker' }, line.replace(/^hpd: /, ''));
      },
    });
    onPool(pool);
    parts.opened.push(() => pool.close());
    return { front: pool, close: (graceMs) => pool.close(graceMs), port: await pool.listen(c.restPort, c.host), pool };
  }
  const server: RestServer = createRestServer({
    registry: live,
    store: parts.store,
    quota: parts.quota,
    baseUrl: c.baseUrl,
    upgradeUrl: c.upgradeUrl,
    clock: c.clock,
    maxConnections: c.restMaxConnections,
    maxConnectionsPerAddress: c.restMaxConnectionsPerAddress,
    trustedProxies: c.trustedProxies,
    responseCacheBytes: c.responseCacheBytes,
    searchCacheBytes: c.searchCacheBytes,
    metrics,
    accessLog: parts.accessLog,
    onError: (err, requestId) => {
      process.stderr.write(`request ${requestId} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      parts.onRequestError(err, requestId);
    },
  });
  const port = await server.listen(c.restPort, c.host);
  parts.opened.push(() => server.close());
  return { front: server, close: (graceMs) => server.close(graceMs), port, pool: null };
}

/** The embedded authorization server (unless an external issuer is configured), listening, and the MCP server, not yet. */
async function startMcpAndAuth(
  c: ServicesConfig,
  parts: ServiceParts,
): Promise<{ mcp: McpHttpServer; auth: AuthServer | null; issuer: string; mcpHealth: HealthProbes; authHealth: HealthProbes }> {
  const { live, store, metrics, accessLog } = parts;
  let auth: AuthServer | null = null;
  const issuer = c.externalIssuer ?? c.authUrl;
  const mcpHealth = createHealthProbes({ store, registry: () => live.current() });
  const trustedProxies = new TrustedProxies(c.trustedProxies ?? []);
  const authHealth = createHealthProbes({ store, registry: () => live.current() });
  if (c.externalIssuer === undefined) {
    if (URL.parse(c.authUrl)?.port === '0')
      throw new ConfigError(`HPD_AUTH_PORT=0 needs HPD_AUTH_URL: the issuer (${c.authUrl}) must name the port clients reach`);
    // Loaded only when it starts: oidc-provider prints a runtime warning on Node 20 as it loads, which
    // `hpd serve --help` and an external issuer have no reason to show.
    const { startAuthServer } = await import('../auth-server/index.ts');
    const started = await startAuthServer({
      issuer: c.authUrl,
      port: c.authPort,
      host: c.host,
      mcpResource: c.mcpUrl,
      store,
      stateDir: c.stateDir,
      clock: c.clock,
      listenerLimits: c.listenerLimits,
      trustedProxies,
      signupsPerHour: c.signupsPerHour,
      redis: parts.backend.redis?.client,
      health: authHealth,
      metrics,
      accessLog,
    });
    parts.opened.push(() => started.close());
    auth = started;
  }
  const verifier = createCredentialVerifier({
    issuer,
    resource: c.mcpUrl,
    store,
    clock: c.clock,
    // The embedded issuer's grants and revoked tokens; an external issuer's are not ours to see (its
    // tokens live until exp).
    ...(auth === null ? {} : { grantActive: auth.grantActive, accessTokenRevoked: auth.accessTokenRevoked }),
  });
  const mcp: McpHttpServer = createMcpServer({
    registry: live,
    quota: parts.quota,
    verifier,
    mcpUrl: c.mcpUrl,
    authServerUrl: issuer,
    baseUrl: c.baseUrl,
    upgradeUrl: c.upgradeUrl,
    allowedOrigins: c.allowedOrigins,
    idleMs: c.mcpIdleMs,
    clock: c.clock,
    version: c.version,
    listenerLimits: c.listenerLimits,
    trustedProxies,
    health: mcpHealth,
    metrics,
    accessLog,
    onError: (err) => {
      process.stderr.write(`mcp request failed: ${err instanceof Error ? err.message : String(err)}\n`);
      parts.onRequestError(err);
    },
  });
  return { mcp, auth, issuer, mcpHealth, authHealth };
}

/** The /metrics listener, when a metrics port is configured. */
async function startMetrics(c: ServicesConfig, parts: ServiceParts, pool: RestPool | null): Promise<MetricsServer | null> {
  if (parts.metrics === undefined) return null;
  const exposition = createMetricsExposition({
    requests: parts.metrics,
    registry: () => parts.live.current(),
    workers: pool === null ? undefined : () => ({ serving: pool.serving, replaced: pool.replaced }),
    store: parts.store,
  });
  parts.opened.push(async () => exposition.close());
  const m = await startMetricsServer(exposition, c.metricsPort ?? 0, c.metricsHost ?? '127.0.0.1', c.listenerLimits);
  parts.opened.push(() => m.close());
  return m;
}
