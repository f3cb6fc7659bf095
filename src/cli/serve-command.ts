/**
 * @module `hpd serve` (and `npm start`): the REST API on the current builds.
 *
 * On a fresh machine there is no build yet: the embedded default dataset (PY2025 from the shared data
 * folder, premiums modeled) is compiled first, so one command brings the service up. Configuration is
 * by environment: HPD_PORT (8080), HPD_HOST (127.0.0.1), HPD_BASE_URL (absolute origin for links),
 * HPD_UPGRADE_URL (pricing page in 402/429), HPD_STATE_DIR (keys, users, counters; default var/),
 * HPD_DATA_DIR (builds), HPD_QUOTA_FREE/PRO/ENTERPRISE (daily limits).
 */
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { createRestServer } from '../http/server.ts';
import { UWS_PACKAGE, uwsVersion } from '../http/uws.ts';
import { openRegistry, yearsWithBuilds } from '../operations/data-registry.ts';
import { openLmdbStateStore } from '../policy/lmdb-store.ts';
import { DailyQuota } from '../policy/quota.ts';
import { dailyLimits } from '../policy/tiers.ts';
import { buildsRoot, cacheRoot, REPO_ROOT, stateDir } from './paths.ts';
import { UsageError } from './usage-error.ts';

/** The dataset built when no build exists. */
export const DEFAULT_YEAR = 2025;

export const SERVE_USAGE = `Usage: hpd serve

Serves the REST API on every plan year with a current build (building the embedded default PY${DEFAULT_YEAR}
dataset first when there is none). Environment: HPD_PORT, HPD_HOST, HPD_BASE_URL, HPD_UPGRADE_URL,
HPD_STATE_DIR, HPD_DATA_DIR, HPD_QUOTA_FREE, HPD_QUOTA_PRO, HPD_QUOTA_ENTERPRISE.`;

export async function serveCommand(argv: readonly string[]): Promise<number> {
  if (argv.length > 0) throw new UsageError(`hpd serve takes no arguments (got ${argv.join(' ')}); configure it with HPD_* variables`);
  const env = process.env;
  const port = Number(env.HPD_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`HPD_PORT must be a port number, got "${env.HPD_PORT}"`);
  const host = env.HPD_HOST ?? '127.0.0.1';
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
  const limits = dailyLimits(env);
  const store = openLmdbStateStore(stateDir(env));
  const quota = DailyQuota.open(store, limits);
  const baseUrlFor = (p: number): string => (env.HPD_BASE_URL ?? `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${p}`).replace(/\/+$/, '');
  // Links are absolute and name the configured port: with HPD_PORT=0 set HPD_BASE_URL as well.
  const baseUrl = baseUrlFor(port);
  const registry = openRegistry(root, baseUrl);
  const server = createRestServer({ registry, store, quota, baseUrl, upgradeUrl: env.HPD_UPGRADE_URL ?? `${baseUrl}/#pricing` });
  const actual = await server.listen(port, host);
  process.stdout.write(
    `hpd: serving years ${registry.years.join(', ')} (data ${registry.version}) on http://${host}:${actual} with ${UWS_PACKAGE} ${uwsVersion()}; links use ${baseUrl}\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.stderr.write(`hpd: ${signal}: draining\n`);
      resolve();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await server.close();
  await quota.close();
  registry.close();
  await store.close();
  process.stderr.write('hpd: stopped\n');
  return 0;
}
