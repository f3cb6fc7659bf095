/**
 * @module `node --import ./bin/register-typescript.js bench/state-check.bench.ts [--keys N] [--grants N]`:
 * what the deep read of a state file (src/policy/lmdb-deep-check.ts) costs every command that opens it
 * and `hpd serve` at start: the wall time of the check of a `state.mdb` holding N API keys (default
 * 10,000, with N/2 users and their counters) and of an `oauth.mdb` holding N grants (default 2,000, with
 * a session, an access and a refresh token each), against the same check of a 1-key file (what a Node
 * start and the loader cost the child). Median of 5 runs each, the two big files also read together as
 * `hpd serve` does.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { OAUTH_DATABASES, OAUTH_FILE, openOAuthStore } from '../src/auth-server/lmdb-adapter.ts';
import { lmdbDeepCheck } from '../src/policy/lmdb-deep-check.ts';
import { openLmdbStateStore, STATE_DATABASES, STATE_FILE } from '../src/policy/lmdb-store.ts';

const { values } = parseArgs({ options: { keys: { type: 'string' }, grants: { type: 'string' } } });
const KEYS = Number(values.keys ?? 10_000);
const GRANTS = Number(values.grants ?? 2_000);
const RUNS = 5;
const BATCH = 500;

const iso = (ms: number): string => new Date(ms).toISOString();
const id = (prefix: string, n: number): string => `${prefix}${createHash('sha256').update(`${prefix}${n}`).digest('hex').slice(0, 16)}`;

async function fillState(dir: string, keys: number): Promise<void> {
  const store = openLmdbStateStore(dir);
  const now = Date.parse('2026-11-20T00:00:00Z');
  const counts = new Map<string, number>();
  for (let from = 0; from < keys; from += BATCH) {
    const writes: Array<Promise<void>> = [];
    for (let k = from; k < Math.min(keys, from + BATCH); k++) {
      const user = id('usr_', k >> 1);
      if (k % 2 === 0) writes.push(store.putUser({ id: user, tier: 'pro', created_at: iso(now), updated_at: iso(now) }));
      const hash = createHash('sha256').update(`key ${k}`).digest('hex');
      writes.push(
        store.putKey({
          id: id('key_', k),
          hash,
          user_id: user,
          label: `service ${k}`,
          tier_at_creation: 'pro',
          created_at: iso(now),
          last_used_at: iso(now),
          revoked_at: null,
        }),
      );
      counts.set(user, k);
    }
    await Promise.all(writes);
  }
  await store.saveCounters('2026-11-20', counts);
  await store.close();
}

async function fillOAuth(dir: string, grants: number): Promise<void> {
  const now = Date.parse('2026-11-20T00:00:00Z');
  const oauth = openOAuthStore(join(dir, OAUTH_FILE), () => now);
  const iat = Math.floor(now / 1000);
  for (let from = 0; from < grants; from += BATCH) {
    const writes: Array<Promise<void>> = [];
    for (let g = from; g < Math.min(grants, from + BATCH); g++) {
      const grantId = id('g', g);
      const base = { grantId, clientId: id('c', g % 100), accountId: id('usr_', g), iat, exp: iat + 86_400 };
      writes.push(
        oauth
          .adapterFor('Grant')
          .upsert(grantId, { jti: grantId, kind: 'Grant', ...base, resources: { 'http://127.0.0.1:8081/mcp': 'plans:read' } }, 86_400),
      );
      writes.push(oauth.adapterFor('Session').upsert(id('s', g), { jti: id('s', g), uid: id('u', g), kind: 'Session', ...base }, 86_400));
      for (const model of ['AccessToken', 'RefreshToken']) {
        const jti = id(model, g);
        writes.push(oauth.adapterFor(model).upsert(jti, { jti, kind: model, scope: 'plans:read', ...base }, 86_400));
      }
    }
    await Promise.all(writes);
  }
  await oauth.close();
}

async function medianMs(check: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const r = await check();
    times.push(performance.now() - t);
    if (r === null || (typeof r === 'object' && r !== null && 'problem' in r))
      throw new Error(`the check refused a sound file: ${JSON.stringify(r)}`);
  }
  times.sort((a, b) => a - b);
  return times[RUNS >> 1]!;
}

const dir = mkdtempSync(join(tmpdir(), 'hpd-state-check-bench-'));
try {
  const big = join(dir, 'big');
  const small = join(dir, 'small');
  await fillState(big, KEYS);
  await fillOAuth(big, GRANTS);
  await fillState(small, 1);
  const state = join(big, STATE_FILE);
  const oauth = join(big, OAUTH_FILE);
  const tiny = await medianMs(() => lmdbDeepCheck(join(small, STATE_FILE), STATE_DATABASES));
  const stateMs = await medianMs(() => lmdbDeepCheck(state, STATE_DATABASES));
  const oauthMs = await medianMs(() => lmdbDeepCheck(oauth, OAUTH_DATABASES));
  const both = await medianMs(() =>
    Promise.all([lmdbDeepCheck(state, STATE_DATABASES), lmdbDeepCheck(oauth, OAUTH_DATABASES)]).then(() => ({})),
  );
  const mib = (path: string): string => (statSync(path).size / 2 ** 20).toFixed(1);
  process.stdout.write(
    [
      `deep check, median of ${RUNS}:`,
      `  state.mdb with 1 key: ${tiny.toFixed(0)} ms (a Node start and the loader)`,
      `  state.mdb with ${KEYS} keys (${mib(state)} MiB): ${stateMs.toFixed(0)} ms`,
      `  oauth.mdb with ${GRANTS} grants, ${GRANTS * 4} records (${mib(oauth)} MiB): ${oauthMs.toFixed(0)} ms`,
      `  both at once, as hpd serve reads them: ${both.toFixed(0)} ms`,
      '',
    ].join('\n'),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
