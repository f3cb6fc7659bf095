/**
 * @module `hpd serve` (and `npm start`): REST, MCP and the embedded authorization server on the current
 * builds.
 *
 * On a fresh machine there is no build yet: the embedded default datasets (PY2024 from the CT, RI and VT
 * state-exchange files, real premiums; PY2025 from the federal files, premiums modeled; both from the
 * shared data folder) are compiled first, so one command brings the service up. Only into the
 * default data directory, though (or with --build-if-missing): a mistyped HPD_DATA_DIR must not
 * quietly start a 15-second build in a new directory and serve from there. Configuration is by
 * environment, declared in src/config/settings.ts and validated all at once before anything starts.
 */
import { join } from 'node:path';
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { type ServeConfig, serveConfig } from '../config/serve-config.ts';
import { UWS_PACKAGE, uwsVersion } from '../http/uws.ts';
import { yearsWithBuilds } from '../operations/data-registry.ts';
import { OAUTH_DATABASES, OAUTH_FILE } from '../auth-server/lmdb-adapter.ts';
import { assertLmdbFilesSound } from '../policy/lmdb-deep-check.ts';
import { STATE_DATABASES, STATE_FILE } from '../policy/lmdb-store.ts';
import { redactRedisUrl } from '../policy/redis-link.ts';
import { environmentUsage } from '../config/settings-docs.ts';
import { SETTINGS } from '../config/settings.ts';
import { parseCommandArgs } from './args.ts';
import { fdBudgetWarning, openFileLimit } from './fd-budget.ts';
import { removePidFile, writePidFile } from './pid-file.ts';
import { PACKAGE_VERSION } from '../package-version.ts';
import { startServices } from './services.ts';
import { REPO_ROOT } from './paths.ts';
import { CliError, UsageError } from './usage-error.ts';
import { createLogger } from '../observability/logger.ts';
import { settleHeap } from '../http/settle-heap.ts';

/** The datasets built when no build exists, oldest first. */
export const DEFAULT_YEARS: readonly number[] = [2024, 2025];
const DEFAULT_LIST = DEFAULT_YEARS.map((y) => `PY${y}`).join(' and ');

export const SERVE_USAGE = `Usage: hpd serve [--workers N] [--build-if-missing]

  --workers N          REST worker threads behind one port (overrides HPD_WORKERS); 0 serves REST from
                       the main thread
  --build-if-missing   build the embedded default ${DEFAULT_LIST} datasets when HPD_DATA_DIR has no build
                       (done without this flag only in the default data directory, ${SETTINGS.dataDir.defaultText})

Serves the REST API, the MCP server and the embedded OAuth authorization server on every plan year with
a current build.

${environmentUsage()}`;

interface ServeArgs {
  readonly workers: number | undefined;
  readonly buildIfMissing: boolean;
}

function parseServeArgs(argv: readonly string[]): ServeArgs {
  const { values } = parseCommandArgs('serve', argv, { workers: { type: 'string' }, 'build-if-missing': { type: 'boolean' } });
  const raw = values.workers;
  let workers: number | undefined;
  if (typeof raw === 'string') {
    workers = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(workers) || workers > 256)
      throw new UsageError(`--workers must be a whole number of REST worker threads from 0 to 256, got "${raw}"`, 'see hpd serve --help');
  }
  return { workers, buildIfMissing: values['build-if-missing'] === true };
}

/** A data directory without any build gets the embedded default datasets, if it is the default one or asked for. */
async function buildDefaultsIfMissing(c: ServeConfig, buildIfMissing: boolean): Promise<void> {
  const root = c.dataDir;
  if (yearsWithBuilds(root).length > 0) return;
  if (!c.dataDirIsDefault && !buildIfMissing) {
    throw new CliError(
      `no build under ${root} (HPD_DATA_DIR): check the path, build one with HPD_DATA_DIR=${root} hpd build --year ${DEFAULT_YEARS.at(-1)}, or pass --build-if-missing to build the default ${DEFAULT_LIST} datasets there`,
    );
  }
  process.stderr.write(`no build found under ${root}: building the embedded default datasets (${DEFAULT_LIST})\n`);
  for (const year of DEFAULT_YEARS) {
    await buildDataset({
      year,
      root: REPO_ROOT,
      buildsRoot: root,
      cacheDir: c.cacheDir,
      progress: createProgress({ tty: process.stderr.isTTY === true }),
    });
  }
}

/**
 * The embedded state's files, read whole by child processes before anything opens them: a damaged page
 * stops the start with one line instead of a signal in the middle of serving (lmdb-deep-check.ts).
 * With Redis neither file is used; with an external issuer `oauth.mdb` is not.
 */
async function checkStateFiles(c: ServeConfig): Promise<void> {
  if (c.redisUrl !== undefined && c.redisUrl !== '') return;
  const files = [{ path: join(c.stateDir, STATE_FILE), spec: STATE_DATABASES }];
  if (c.externalIssuer === undefined) files.push({ path: join(c.stateDir, OAUTH_FILE), spec: OAUTH_DATABASES });
  await assertLmdbFilesSound(files);
}

/** Past the drain, what closing the state may take before the process gives up waiting and exits. */
const EXIT_MARGIN_MS = 5_000;

export async function serveCommand(argv: readonly string[]): Promise<number> {
  const args = parseServeArgs(argv);
  const c = serveConfig(process.env, { workers: args.workers });
  const { workers, drainMs, host } = c;
  const logger = createLogger({ level: c.logLevel, thread: 'main' });

  const budget = fdBudgetWarning(
    {
      HPD_REST_MAX_CONNECTIONS: c.restMaxConnections,
      'HPD_MAX_CONNECTIONS (MCP)': c.maxConnections,
      'HPD_MAX_CONNECTIONS (auth)': c.externalIssuer === undefined ? c.maxConnections : 0,
    },
    openFileLimit(),
  );
  if (budget !== null) process.stderr.write(`${budget}\n`);

  const root = c.dataDir;
  await checkStateFiles(c);
  await buildDefaultsIfMissing(c, args.buildIfMissing);
  const services = await startServices({
    buildsRoot: root,
    stateDir: c.stateDir,
    host,
    restPort: c.port,
    baseUrl: c.baseUrl,
    upgradeUrl: c.upgradeUrl,
    mcpPort: c.mcpPort,
    mcpUrl: c.mcpUrl,
    authPort: c.authPort,
    authUrl: c.authUrl,
    externalIssuer: c.externalIssuer,
    limits: c.limits,
    allowedOrigins: c.allowedOrigins,
    mcpIdleMs: c.mcpIdleMs,
    version: PACKAGE_VERSION,
    listenerLimits: { maxConnections: c.maxConnections, maxConnectionsPerAddress: c.maxConnectionsPerAddress },
    restMaxConnections: c.restMaxConnections,
    restMaxConnectionsPerAddress: c.restMaxConnectionsPerAddress,
    trustedProxies: c.trustedProxies,
    workers,
    watchBuilds: c.watchBuilds,
    signupsPerHour: c.signupsPerHour,
    responseCacheBytes: c.responseCacheBytes,
    searchCacheBytes: c.searchCacheBytes,
    drainMs,
    drainNoticeMs: c.drainNoticeMs,
    redisUrl: c.redisUrl,
    redisGraceMs: c.redisGraceMs,
    metricsPort: c.metricsPort,
    metricsHost: c.metricsHost,
    logger,
    accessLog: c.accessLogRate,
  });
  settleHeap();
  for (const w of services.registry.warnings) process.stderr.write(`hpd: warning: ${w}\n`);
  process.stdout.write(
    `hpd: serving years ${services.registry.years.join(', ')} (data ${services.registry.version}) on http://${host}:${services.restPort} with ${UWS_PACKAGE} ${uwsVersion()} on Node ${process.version}, ${workers === 0 ? 'REST in the main thread' : `${workers} REST worker thread${workers === 1 ? '' : 's'}`}; links use ${c.baseUrl}\n` +
      (services.metricsPort === null ? '' : `hpd: metrics on http://${c.metricsHost}:${services.metricsPort}/metrics\n`) +
      `hpd: MCP on http://${host}:${services.mcpPort} as ${c.mcpUrl}; authorization server ${c.externalIssuer === undefined ? `embedded at ${c.authUrl}` : `external: ${c.externalIssuer}`}; state ${c.redisUrl === undefined ? `embedded in ${c.stateDir}` : `on Redis at ${redactRedisUrl(c.redisUrl)}`}\n`,
  );
  // `hpd reload` finds this process here; SIGHUP adopts newly published builds at once (the watcher
  // adopts them within about a second anyway).
  const reload = (): void => {
    const r = services.reload();
    if (r.adopted.length === 0 && r.refused.length === 0) process.stderr.write('hpd: SIGHUP: no new build to adopt\n');
  };
  process.on('SIGHUP', reload);
  // Written once SIGHUP is handled: its default action would end the process.
  const state = c.stateDir;
  writePidFile(state);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.stderr.write(
        `hpd: ${signal}: draining: /readyz fails now, accepting for ${c.drainNoticeMs} ms more, exiting within ${drainMs} ms\n`,
      );
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
