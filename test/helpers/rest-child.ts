/**
 * @module A REST server in a child process, for abuse tests: a crash or a memory blow-up must be
 * observed from outside (exit code, /proc/<pid>/status), not take the test runner down with it.
 *
 * Run as `node --import ./bin/register-typescript.js test/helpers/rest-child.ts <buildsRoot> <stateDir>`;
 * prints one JSON line `{ port, keys }` on stdout once listening, closes on SIGTERM. REST_CHILD_MAX_CONNECTIONS
 * sets the connection cap.
 */
import { createRestServer } from '../../src/http/server.ts';
import { openRegistry } from '../../src/operations/data-registry.ts';
import { createKey } from '../../src/policy/api-keys.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import { DailyQuota } from '../../src/policy/quota.ts';
import { DEFAULT_DAILY_LIMITS } from '../../src/policy/tiers.ts';

const [buildsRoot, stateDir] = process.argv.slice(2);
if (buildsRoot === undefined || stateDir === undefined) throw new Error('usage: rest-child.ts <buildsRoot> <stateDir>');
const store = openLmdbStateStore(stateDir);
const quota = DailyQuota.open(store, { ...DEFAULT_DAILY_LIMITS, enterprise: 1e9 });
const registry = openRegistry(buildsRoot, 'http://api.test');
const server = createRestServer({
  registry,
  store,
  quota,
  baseUrl: 'http://api.test',
  upgradeUrl: 'https://hpd.test/pricing',
  maxConnections: process.env.REST_CHILD_MAX_CONNECTIONS === undefined ? undefined : Number(process.env.REST_CHILD_MAX_CONNECTIONS),
});
const port = await server.listen(0);
const now = Date.now();
const keys = {
  free: (await createKey(store, { tier: 'free', userId: 'user-free', label: 'child', now })).plaintext,
  enterprise: (await createKey(store, { tier: 'enterprise', userId: 'user-ent', label: 'child', now })).plaintext,
};
process.stdout.write(`${JSON.stringify({ port, keys })}\n`);
process.once('SIGTERM', () => {
  void server.close().then(async () => {
    await quota.close();
    registry.close();
    await store.close();
    process.exit(0);
  });
});
