/**
 * @module `node --import ./bin/register-typescript.js bench/key-timing.bench.ts`: whether the time an
 * API-key check takes tells an attacker anything about a real key. In-process, without the network's
 * noise (the attacker's best case), against a store of 10,000 keys with 1,000 of them remembered by the
 * authentication cache, interleaved tinybench runs of wrong keys that
 *
 * - are random;
 * - share all but the last hex digit with a real, cached key (a byte-by-byte comparison of keys would
 *   take longest on these);
 * - share the first 8 hex digits of their SHA-256 with a real key's stored hash (ground offline; the
 *   store's B-tree compares hashes, so this is what a lookup's timing could reveal: a prefix of a
 *   hash, from which no key follows).
 *
 * A difference in medians well inside the run-to-run spread of the random set means the timing says
 * nothing. The cache is a Map keyed by the header: a lookup compares strings only when their hashes
 * are equal, so a near-miss key costs what any other miss does.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { createKey } from '../src/policy/api-keys.ts';
import { AuthCache } from '../src/policy/auth-cache.ts';
import { openLmdbStateStore } from '../src/policy/lmdb-store.ts';

const KEYS = 10_000;
const CACHED = 1_000;
const SAMPLES = 2_000;

const dir = mkdtempSync(join(tmpdir(), 'hpd-key-timing-'));
const store = openLmdbStateStore(dir);
try {
  const now = Date.now();
  const real: string[] = [];
  for (let i = 0; i < KEYS; i++) real.push((await createKey(store, { tier: 'free', now })).plaintext);
  const cache = new AuthCache(store);
  for (const k of real.slice(0, CACHED)) cache.authenticate(`Bearer ${k}`, now);

  const randomKey = (): string => `hpd_${randomBytes(20).toString('hex')}`;
  const sha = (k: string): string => createHash('sha256').update(k).digest('hex');
  const nearMiss = real.slice(0, SAMPLES).map((k) => {
    const last = k.at(-1)!;
    return `${k.slice(0, -1)}${last === '0' ? '1' : '0'}`;
  });
  // Wrong keys whose hashes start like stored hashes: ground until SAMPLES of them are found.
  const stored = new Set(real.map((k) => sha(k).slice(0, 4)));
  const hashNear: string[] = [];
  while (hashNear.length < SAMPLES) {
    const k = randomKey();
    if (stored.has(sha(k).slice(0, 4))) hashNear.push(k);
  }
  const sets: Record<string, string[]> = {
    'random wrong key': Array.from({ length: SAMPLES }, randomKey),
    'wrong in the last digit of a cached key': nearMiss,
    'hash shares 4 hex digits with a stored hash': hashNear,
    'another random set (spread)': Array.from({ length: SAMPLES }, randomKey),
  };
  const rows: Array<Record<string, string | number>> = [];
  for (let round = 1; round <= 3; round++) {
    const bench = new Bench({ time: Number(process.env.HPD_BENCH_MS ?? 500) });
    for (const [name, keys] of Object.entries(sets)) {
      let i = 0;
      bench.add(name, () => {
        const r = cache.authenticate(`Bearer ${keys[i++ % keys.length]}`, now);
        if (r.ok) throw new Error('a wrong key authenticated');
      });
    }
    await bench.run();
    const base = (bench.tasks[0]!.result as unknown as { latency: { p50: number } }).latency.p50;
    for (const t of bench.tasks) {
      const p50 = (t.result as unknown as { latency: { p50: number } }).latency.p50;
      rows.push({ round, set: t.name, 'median ns': Math.round(p50 * 1e6), 'vs random': +(p50 / base).toFixed(3) });
    }
  }
  console.table(rows);
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
