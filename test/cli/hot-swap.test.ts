/**
 * Hot swap as an operator triggers it: a build published under load is adopted within 2 s with no failed
 * or mixed response (each body's data_freshness belongs to the build its ETag names); rolling back
 * works the same way; with watching off, `hpd reload` (SIGHUP through the pid file) adopts it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { currentHash, switchCurrent } from '../../build/publish.ts';
import { createKey } from '../../src/policy/api-keys.ts';
import { buildFixtureVariant } from '../helpers/fixture-variant.ts';
import { HPD, prepareServe, spawnServe } from '../helpers/serve-fixture.ts';
import { startTestServices } from '../helpers/services.ts';

interface Ready {
  readonly build: string;
  readonly builds: Record<string, string>;
}

async function readyz(base: string): Promise<Ready> {
  return (await (await fetch(`${base}/readyz`)).json()) as Ready;
}

/** Polls /readyz until year 2025 serves `hash`; returns the milliseconds it took. */
async function waitForBuild(base: string, hash: string, limitMs: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < limitMs) {
    if ((await readyz(base)).builds['2025'] === hash) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`build ${hash.slice(0, 12)} not adopted within ${limitMs} ms`);
}

test('builds published under load are adopted within 2 s, every response wholly from one build', { timeout: 120_000 }, async (t) => {
  const svc = await startTestServices({ limits: { enterprise: 1_000_000 } });
  t.after(() => svc.close());
  const { services, dir, buildsRoot: root } = svc;
  const a = currentHash(root, 2025)!;
  const key = (await createKey(services.store, { tier: 'enterprise', userId: 'user-swap', label: 'test', now: Date.now() })).plaintext;
  const base = svc.restUrl;
  const versionOf = new Map<string, string>([[(await readyz(base)).build, '2024-11-20']]);

  const seen: Array<{ path: string; status: number; etag: string; freshness: string | null }> = [];
  let stop = false;
  const paths = ['/v1/health/plans?zip=77002&age=40', '/v1/health/plans/11111TX0010001-01', '/v1/health/zips/77002', '/v1/health/years'];
  const load = Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      for (let n = i; !stop; n++) {
        const path = paths[n % paths.length]!;
        const r = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
        const body = (await r.json()) as { data_freshness?: string };
        seen.push({ path, status: r.status, etag: r.headers.get('etag') ?? '', freshness: body.data_freshness ?? null });
      }
    }),
  );
  await new Promise((r) => setTimeout(r, 300));
  const b = await buildFixtureVariant(dir, root, '2024-12-01');
  const adoptB = await waitForBuild(base, b, 2000);
  versionOf.set((await readyz(base)).build, '2024-12-01');
  await new Promise((r) => setTimeout(r, 300));
  switchCurrent(root, 2025, a); // roll back, as `hpd builds use` does
  const adoptA = await waitForBuild(base, a, 2000);
  await new Promise((r) => setTimeout(r, 300));
  stop = true;
  await load;

  assert.ok(adoptB <= 2000 && adoptA <= 2000, `adopted in ${adoptB.toFixed(0)} ms and ${adoptA.toFixed(0)} ms`);
  assert.ok(seen.length > 200, `${seen.length} responses`);
  const bad = seen.filter((s) => s.status !== 200);
  assert.deepEqual(bad, [], 'no failed response');
  const byBuild = new Map<string, number>();
  for (const s of seen) {
    const version = /^W\/"([0-9a-f]+)-/.exec(s.etag)?.[1] ?? '';
    const freshness = versionOf.get(version);
    assert.ok(freshness !== undefined, `ETag ${s.etag} names a build that was served`);
    byBuild.set(freshness, (byBuild.get(freshness) ?? 0) + 1);
    if (s.freshness !== null) assert.ok(s.freshness.includes(freshness), `${s.path}: body from ${s.freshness}, ETag from ${freshness}`);
  }
  assert.ok(
    (byBuild.get('2024-11-20') ?? 0) > 0 && (byBuild.get('2024-12-01') ?? 0) > 0,
    `responses from both builds: ${JSON.stringify([...byBuild])}`,
  );
});

test('with watching off, hpd reload makes hpd serve adopt a published build; hpd reload without a server fails in one line', {
  timeout: 120_000,
}, async (t) => {
  const f = await prepareServe('hpd-reload-', { tier: 'pro', userId: 'user-reload' }, { HPD_WATCH_BUILDS: '0' });
  t.after(() => rmSync(f.dir, { recursive: true, force: true }));
  const { child, stderr, exited } = await spawnServe(f.env);
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const base = `http://127.0.0.1:${f.restPort}`;
  const root = f.env.HPD_DATA_DIR!;
  const a = (await readyz(base)).builds['2025']!;
  const b = await buildFixtureVariant(f.dir, root, '2024-12-01');
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await readyz(base)).builds['2025'], a, 'not watching: still the old build');
  const reload = spawnSync(process.execPath, [HPD, 'reload'], { env: f.env, encoding: 'utf8' });
  assert.equal(reload.status, 0, reload.stderr);
  assert.match(reload.stdout, new RegExp(`asked hpd serve \\(pid ${child.pid}\\) to reload`));
  await waitForBuild(base, b, 2000);
  assert.match(stderr(), new RegExp(`hpd: reload: serving 2025/${b.slice(0, 12)} \\(was ${a.slice(0, 12)}\\)`));

  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  const none = spawnSync(process.execPath, [HPD, 'reload'], { env: f.env, encoding: 'utf8' });
  assert.equal(none.status, 1);
  assert.match(none.stderr, /^hpd: no running hpd serve found: .*hpd-serve\.pid is missing/);
  assert.equal(none.stderr.trim().split('\n').length, 1);
});
