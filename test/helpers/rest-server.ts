/**
 * @module A real REST server on port 0 over the fixture dataset, with a real LMDB state store, one API
 * key per tier and an injectable clock, for end-to-end tests with `fetch`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRestServer, type RestServer } from '../../src/http/server.ts';
import { openRegistry, type DataRegistry } from '../../src/operations/data-registry.ts';
import { createKey } from '../../src/policy/api-keys.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import { DailyQuota } from '../../src/policy/quota.ts';
import type { StateStore } from '../../src/policy/state-store.ts';
import { DEFAULT_DAILY_LIMITS, type Tier } from '../../src/policy/tiers.ts';
import { buildFixture } from './fixture-build.ts';

export interface FixtureServer {
  readonly url: string;
  readonly keys: Readonly<Record<Tier, string>>;
  readonly store: StateStore;
  readonly registry: DataRegistry;
  readonly quota: DailyQuota;
  readonly buildsRoot: string;
  readonly stateDir: string;
  readonly server: RestServer;
  /** Current time of the injected clock (ms); tests may move it. */
  now: number;
  get(path: string, init?: RequestInit & { tier?: Tier | null }): Promise<Response>;
  close(): Promise<void>;
}

export { buildFixture };

export async function startFixtureServer(
  opts: {
    limits?: Partial<Record<Tier, number>>;
    buildsRoot?: string;
    stateDir?: string;
    startAt?: number;
    responseCacheBytes?: number;
    searchCacheBytes?: number;
  } = {},
): Promise<FixtureServer> {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-rest-'));
  const buildsRoot = opts.buildsRoot ?? (await buildFixture(dir));
  const stateDir = opts.stateDir ?? join(dir, 'state');
  const store = openLmdbStateStore(stateDir);
  const state = { now: opts.startAt ?? Date.parse('2026-11-20T12:00:00Z') };
  const clock = (): number => state.now;
  const quota = DailyQuota.open(store, { ...DEFAULT_DAILY_LIMITS, ...opts.limits }, clock);
  // The base URL is fixed before the port is known: links are checked against it.
  const baseUrl = 'http://api.test';
  const registry = openRegistry(buildsRoot, baseUrl);
  const server = createRestServer({
    registry,
    store,
    quota,
    baseUrl,
    upgradeUrl: 'https://hpd.test/pricing',
    clock,
    onError: () => {},
    responseCacheBytes: opts.responseCacheBytes,
    searchCacheBytes: opts.searchCacheBytes,
  });
  const port = await server.listen(0);
  const keys = {
    free: (await createKey(store, { tier: 'free', userId: 'user-free', label: 'test', now: state.now })).plaintext,
    pro: (await createKey(store, { tier: 'pro', userId: 'user-pro', label: 'test', now: state.now })).plaintext,
    enterprise: (await createKey(store, { tier: 'enterprise', userId: 'user-ent', label: 'test', now: state.now })).plaintext,
  };
  const url = `http://127.0.0.1:${port}`;
  const fs: FixtureServer = {
    url,
    keys,
    store,
    registry,
    quota,
    buildsRoot,
    stateDir,
    server,
    get now() {
      return state.now;
    },
    set now(v: number) {
      state.now = v;
    },
    get(path, init = {}) {
      const tier = init.tier === undefined ? 'pro' : init.tier;
      const headers = new Headers(init.headers);
      if (tier !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${keys[tier]}`);
      return fetch(`${url}${path}`, { ...init, headers });
    },
    async close() {
      await server.close();
      await quota.close();
      registry.close();
      await store.close();
      if (opts.buildsRoot === undefined || opts.stateDir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
  return fs;
}
