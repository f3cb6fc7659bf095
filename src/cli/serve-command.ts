/**
 * @module `hpd serve` (and `npm start`): REST, MCP and the embedded authorization server on the current
 * builds.
 *
 * On a fresh machine there is no build yet: the embedded default dataset (PY2025 from the shared data
 * folder, premiums modeled) is compiled first, so one command brings the service up. Configuration is
 * by environment: HPD_PORT (8080), HPD_HOST (127.0.0.1), HPD_BASE_URL (absolute origin for links),
 * HPD_UPGRADE_URL (pricing page in 402/429), HPD_STATE_DIR (keys, users, counters, OAuth keys and
 * grants; default var/), HPD_DATA_DIR (builds), HPD_QUOTA_FREE/PRO/ENTERPRISE (daily limits),
 * HPD_MCP_PORT (8081), HPD_MCP_URL (resource identifier, default http://127.0.0.1:8081/mcp),
 * HPD_MCP_ALLOWED_ORIGINS (browser origins), HPD_MCP_IDLE_MINUTES (30), HPD_AUTH_PORT (8082), HPD_AUTH_URL (embedded issuer),
 * HPD_AUTH_ISSUER (an external issuer: the embedded authorization server then does not start),
 * HPD_MAX_CONNECTIONS (concurrent connections per node:http listener, 1000), HPD_DRAIN_SECONDS (longest
 * shutdown drain, 10).
 */
import { availableParallelism } from 'node:os';
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { DEFAULT_DRAIN_MS, DEFAULT_LISTENER_LIMITS } from '../http/node-listener.ts';
import { DEFAULT_REST_MAX_CONNECTIONS, DEFAULT_RESPONSE_CACHE_BYTES } from '../http/server.ts';
import { UWS_PACKAGE, uwsVersion } from '../http/uws.ts';
import { yearsWithBuilds } from '../operations/data-registry.ts';
import { redactRedisUrl } from '../policy/redis-link.ts';
import { DEFAULT_REDIS_GRACE_MS } from '../policy/state-backend.ts';
import { dailyLimits } from '../policy/tiers.ts';
import { fdBudgetWarning, openFileLimit } from './fd-budget.ts';
import { removePidFile, writePidFile } from './pid-file.ts';
import { PACKAGE_VERSION } from './package-version.ts';
import { redisConfig } from './redis-config.ts';
import { startServices } from './services.ts';
import { buildsRoot, cacheRoot, REPO_ROOT, stateDir } from './paths.ts';
import { UsageError } from './usage-error.ts';
import { createLogger } from '../observability/logger.ts';
import { observabilityConfig } from '../observability/observability-config.ts';

/** The dataset built when no build exists. */
export const DEFAULT_YEAR = 2025;

export const SERVE_USAGE = `Usage: hpd serve [--workers N]

  --workers N   REST worker threads behind one port (HPD_WORKERS; default: the cores, ${availableParallelism()}
                here); 0 serves REST from the main thread

Serves the REST API, the MCP server and the embedded OAuth authorization server on every plan year with
a current build (building the embedded default PY${DEFAULT_YEAR} dataset first when there is none).
Environment: HPD_PORT, HPD_HOST, HPD_BASE_URL, HPD_UPGRADE_URL, HPD_STATE_DIR, HPD_DATA_DIR,
HPD_QUOTA_FREE, HPD_QUOTA_PRO, HPD_QUOTA_ENTERPRISE, HPD_MCP_PORT, HPD_MCP_URL, HPD_MCP_ALLOWED_ORIGINS,
HPD_MCP_IDLE_MINUTES,
HPD_AUTH_PORT, HPD_AUTH_URL, HPD_AUTH_ISSUER, HPD_MAX_CONNECTIONS (per MCP / authorization listener,
default ${DEFAULT_LISTENER_LIMITS.maxConnections}), HPD_REST_MAX_CONNECTIONS (REST listener, default ${DEFAULT_REST_MAX_CONNECTIONS}),
HPD_RESPONSE_CACHE_MB (REST response cache, default ${DEFAULT_RESPONSE_CACHE_BYTES / 1024 / 1024}), HPD_DRAIN_SECONDS (longest shutdown
drain, default ${DEFAULT_DRAIN_MS / 1000}), HPD_WATCH_BUILDS (1: adopt newly published builds within ~1 s; 0: only on
SIGHUP or hpd reload), HPD_REDIS_URL (shared state for several instances, e.g. redis://127.0.0.1:6379/0;
default: the embedded store in HPD_STATE_DIR), HPD_REDIS_GRACE_SECONDS (how long known keys are served while
Redis is unreachable, default ${DEFAULT_REDIS_GRACE_MS / 1000}), HPD_METRICS_PORT (Prometheus /metrics on its own
listener; unset: off), HPD_METRICS_HOST (default 127.0.0.1), HPD_ACCESS_LOG (off, full or a sampling rate
such as 0.01; default off), HPD_LOG_LEVEL (JSON logs on stdout, default info; silent: none).`;

/** `--workers N` or HPD_WORKERS; the cores by default. */
function parseWorkers(argv: readonly string[], env: NodeJS.ProcessEnv): number {
  let raw = env.HPD_WORKERS;
  let name = 'HPD_WORKERS';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--workers' || a.startsWith('--workers=')) {
      raw = a === '--workers' ? argv[++i] : a.slice('--workers='.length);
      name = '--workers';
      if (raw === undefined) throw new UsageError('--workers needs a number');
    } else {
      throw new UsageError(`hpd serve: unknown argument "${a}"; it takes --workers N and is configured with HPD_* variables`);
    }
  }
  if (raw === undefined || raw === '') return availableParallelism();
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n > 256) throw new UsageError(`${name} must be a whole number of REST worker threads from 0 to 256, got "${raw}"`);
  return n;
}

/** Past the drain, what closing the state may take before the process gives up waiting and exits. */
const EXIT_MARGIN_MS = 5_000;

export async function serveCommand(argv: readonly string[]): Promise<number> {
  const env = process.env;
  const workers = parseWorkers(argv, env);
  const port = (name: string, fallback: number): number => {
    const v = Number(env[name] ?? fallback);
    if (!Number.isInteger(v) || v < 0 || v > 65535) throw new UsageError(`${name} must be a port number, got "${env[name]}"`);
    return v;
  };
  const host = env.HPD_HOST ?? '127.0.0.1';
  const linkHost = host === '0.0.0.0' ? '127.0.0.1' : host;
  const restPort = port('HPD_PORT', 8080);
  const mcpPort = port('HPD_MCP_PORT', 8081);
  const authPort = port('HPD_AUTH_PORT', 8082);
  const trim = (u: string): string => u.replace(/\/+$/, '');
  // Links and identifiers name the configured ports: with a port of 0 set the matching URL as well.
  const baseUrl = trim(env.HPD_BASE_URL ?? `http://${linkHost}:${restPort}`);
  const mcpUrl = trim(env.HPD_MCP_URL ?? `http://${linkHost}:${mcpPort}/mcp`);
  const authUrl = trim(env.HPD_AUTH_URL ?? `http://${linkHost}:${authPort}`);
  const externalIssuer = env.HPD_AUTH_ISSUER !== undefined && env.HPD_AUTH_ISSUER !== '' ? trim(env.HPD_AUTH_ISSUER) : undefined;
  const idleMinutes = Number(env.HPD_MCP_IDLE_MINUTES ?? 30);
  if (!Number.isFinite(idleMinutes) || idleMinutes <= 0) throw new UsageError(`HPD_MCP_IDLE_MINUTES must be a positive number, got "${env.HPD_MCP_IDLE_MINUTES}"`);
  const maxConnections = Number(env.HPD_MAX_CONNECTIONS ?? DEFAULT_LISTENER_LIMITS.maxConnections);
  if (!Number.isSafeInteger(maxConnections) || maxConnections <= 0) throw new UsageError(`HPD_MAX_CONNECTIONS must be a positive integer, got "${env.HPD_MAX_CONNECTIONS}"`);
  const restMaxConnections = Number(env.HPD_REST_MAX_CONNECTIONS ?? DEFAULT_REST_MAX_CONNECTIONS);
  if (!Number.isSafeInteger(restMaxConnections) || restMaxConnections <= 0) throw new UsageError(`HPD_REST_MAX_CONNECTIONS must be a positive integer, got "${env.HPD_REST_MAX_CONNECTIONS}"`);
  const cacheMb = Number(env.HPD_RESPONSE_CACHE_MB ?? DEFAULT_RESPONSE_CACHE_BYTES / 1024 / 1024);
  if (!Number.isFinite(cacheMb) || cacheMb < 0 || cacheMb > 65536) throw new UsageError(`HPD_RESPONSE_CACHE_MB must be a number of MiB from 0 to 65536, got "${env.HPD_RESPONSE_CACHE_MB}"`);
  const watch = env.HPD_WATCH_BUILDS ?? '1';
  if (watch !== '0' && watch !== '1') throw new UsageError(`HPD_WATCH_BUILDS must be 1 (adopt published builds by itself) or 0 (only on SIGHUP / hpd reload), got "${watch}"`);
  const drainSeconds = Number(env.HPD_DRAIN_SECONDS ?? DEFAULT_DRAIN_MS / 1000);
  if (!Number.isFinite(drainSeconds) || drainSeconds < 0 || drainSeconds > 3600) throw new UsageError(`HPD_DRAIN_SECONDS must be a number of seconds from 0 to 3600, got "${env.HPD_DRAIN_SECONDS}"`);
  const drainMs = Math.round(drainSeconds * 1000);
  const redis = redisConfig(env);
  let obs;
  try {
    obs = observabilityConfig(env);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const logger = createLogger({ level: obs.logLevel, thread: 'main' });

  const budget = fdBudgetWarning({ HPD_REST_MAX_CONNECTIONS: restMaxConnections, 'HPD_MAX_CONNECTIONS (MCP)': maxConnections, 'HPD_MAX_CONNECTIONS (auth)': externalIssuer === undefined ? maxConnections : 0 }, openFileLimit());
  if (budget !== null) process.stderr.write(`${budget}\n`);

  const root = buildsRoot();
  if (yearsWithBuilds(root).length === 0) {
    process.stderr.write(`no build found under ${root}: building the embedded default dataset (PY${DEFAULT_YEAR})\n`);
    await buildDataset({
      year: DEFAULT_YEAR,
      root: REPO_ROOT,
      buildsRoot: root,
      cacheDir: cacheRoot(),
      progress: createProgress({ tty: process.stderr.isTTY === true }),
    });
  }
  const services = await startServices({
    buildsRoot: root,
    stateDir: stateDir(env),
    host,
    restPort,
    baseUrl,
    upgradeUrl: env.HPD_UPGRADE_URL ?? `${baseUrl}/pricing`,
    mcpPort,
    mcpUrl,
    authPort,
    authUrl,
    externalIssuer,
    limits: dailyLimits(env),
    allowedOrigins: (env.HPD_MCP_ALLOWED_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean),
    mcpIdleMs: idleMinutes * 60_000,
    version: PACKAGE_VERSION,
    listenerLimits: { maxConnections },
    restMaxConnections,
    workers,
    watchBuilds: watch === '1',
    responseCacheBytes: Math.round(cacheMb * 1024 * 1024),
    drainMs,
    redisUrl: redis.url,
    redisGraceMs: redis.graceMs,
    metricsPort: obs.metricsPort,
    metricsHost: obs.metricsHost,
    logger,
    accessLog: obs.accessLog,
  });
  for (const w of services.registry.warnings) process.stderr.write(`hpd: warning: ${w}\n`);
  process.stdout.write(
    `hpd: serving years ${services.registry.years.join(', ')} (data ${services.registry.version}) on http://${host}:${services.restPort} with ${UWS_PACKAGE} ${uwsVersion()}, ${workers === 0 ? 'REST in the main thread' : `${workers} REST worker thread${workers === 1 ? '' : 's'}`}; links use ${baseUrl}\n` +
      (services.metricsPort === null ? '' : `hpd: metrics on http://${obs.metricsHost}:${services.metricsPort}/metrics\n`) +
      `hpd: MCP on http://${host}:${services.mcpPort} as ${mcpUrl}; authorization server ${externalIssuer === undefined ? `embedded at ${authUrl}` : `external: ${externalIssuer}`}; state ${redis.url === undefined ? `embedded in ${stateDir(env)}` : `on Redis at ${redactRedisUrl(redis.url)}`}\n`,
  );
  // `hpd reload` finds this process here; SIGHUP adopts newly published builds at once (the watcher
  // adopts them within about a second anyway).
  const reload = (): void => {
    const r = services.reload();
    if (r.adopted.length === 0 && r.refused.length === 0) process.stderr.write('hpd: SIGHUP: no new build to adopt\n');
  };
  process.on('SIGHUP', reload);
  // Written once SIGHUP is handled: its default action would end the process.
  const state = stateDir(env);
  writePidFile(state);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.stderr.write(`hpd: ${signal}: draining\n`);
      resolve();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  process.off('SIGHUP', reload);
  removePidFile(state);
  // The drain is bounded; this bounds what follows it (closing the stores), so SIGTERM always ends.
  setTimeout(() => {
    process.stderr.write(`hpd: still stopping ${drainMs + EXIT_MARGIN_MS} ms after the signal: exiting\n`);
    process.exit(1);
  }, drainMs + EXIT_MARGIN_MS).unref();
  await services.close();
  process.stderr.write('hpd: stopped\n');
  return 0;
}
