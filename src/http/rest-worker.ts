/**
 * @module One REST worker thread: the uWS app of src/http/server.ts over the builds the main thread
 * opened (their tables and catalog are shared memory; this thread has its own LMDB handle, which maps
 * the same files) and its own state store handle, counting against the quota table shared by every thread. The acceptor in the main thread hands it connections.
 *
 * A worker must close its app before its thread ends: uWS's poll handle left open makes Node abort the
 * whole process. An unexpected error therefore asks the acceptor to stop handing it connections, waits
 * for the answer (or a second), then closes the app and ends; the acceptor starts a replacement.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createFollowerRegistry } from '../operations/live-registry.ts';
import type { Quota } from '../policy/quota.ts';
import { openStateBackend } from '../policy/state-backend.ts';
import { attachSharedQuota } from '../policy/shared-quota.ts';
import type { FromWorker, RestWorkerData, ToWorker } from './rest-worker-protocol.ts';
import { createRestServer } from './server.ts';
import { settleHeap } from './settle-heap.ts';
import { createAccessLog } from '../observability/access-log.ts';
import { createLogger, flushLogger } from '../observability/logger.ts';
import { RequestMetrics } from '../observability/request-metrics.ts';
import { InvariantError } from '../invariant.ts';

if (parentPort === null) throw new InvariantError('rest-worker.ts runs as a worker thread');
const port = parentPort;
const data = workerData as RestWorkerData;
const post = (m: FromWorker): void => port.postMessage(m);
const listeningPort = new Int32Array(data.port);

const log = (line: string): void => void process.stderr.write(`${line} [worker ${data.index}]\n`);
const live = createFollowerRegistry(data.years, log);
const backend = await openStateBackend({
  stateDir: data.stateDir,
  redisUrl: data.redisUrl,
  redisGraceMs: data.redisGraceMs,
  name: `rest worker ${data.index}`,
});
const store = backend.store;
const logger = data.logLevel === undefined ? undefined : createLogger({ level: data.logLevel, thread: `rest worker ${data.index}` });
// Row 0 is the main thread's; a replacement worker takes over its predecessor's row.
const metrics = data.metrics === undefined ? undefined : RequestMetrics.attach(data.metrics, data.index + 1);
const quota: Quota = backend.leasedQuota(data.limits) ?? attachSharedQuota(data.quota);
const server = createRestServer({
  registry: live,
  store,
  quota,
  baseUrl: data.baseUrl,
  upgradeUrl: data.upgradeUrl,
  maxConnections: data.maxConnections,
  maxConnectionsPerAddress: data.maxConnectionsPerAddress,
  trustedProxies: data.trustedProxies,
  listeningPort: () => Atomics.load(listeningPort, 0),
  threads: data.threads,
  name: `rest worker ${data.index}`,
  responseCacheBytes: data.responseCacheBytes,
  searchCacheBytes: data.searchCacheBytes,
  metrics,
  accessLog: logger === undefined ? undefined : createAccessLog(logger, data.accessLog ?? 0),
  onError: (err, requestId) => {
    process.stderr.write(`request ${requestId} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    logger?.error({ reqId: requestId, err }, 'request failed');
  },
});

let closing = false;
async function shutdown(code: number, graceMs = 0): Promise<void> {
  if (closing) return;
  closing = true;
  await server.close(graceMs);
  live.close();
  await quota.close();
  await backend.close();
  if (logger !== undefined) flushLogger(logger);
  port.close();
  process.exitCode = code;
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'follow') {
    live.follow(m.years);
    post({ type: 'followed' });
  } else if (m.type === 'drain') server.drain();
  else if (m.type === 'close') void shutdown(0, m.graceMs);
  else if (m.type === 'fail')
    setImmediate(() => {
      // Deliberately a plain uncaught Error: the drill stands for a bug, which is what kills a worker.
      throw new Error('fault injected by the acceptor');
    });
});

process.on('uncaughtException', (err) => {
  process.stderr.write(`rest worker ${data.index}: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
  logger?.error({ err }, 'unexpected error: the worker closes and is replaced');
  post({ type: 'fatal', message: err instanceof Error ? err.message : String(err) });
  // The acceptor answers with 'close' once it stopped handing this app connections.
  setTimeout(() => void shutdown(1), 1000).unref();
});

settleHeap();
post({ type: 'ready', descriptor: server.appDescriptor() });
