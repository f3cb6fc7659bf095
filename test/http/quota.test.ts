/**
 * @module The daily quota through a real server (docs/compatibility.md#daily-counter): the 429 and its headers,
 * refused calls not counting, the reset at 00:00 UTC, counters surviving a restart and keys of one
 * user sharing one counter.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createKey, setUserTier } from '../../src/policy/api-keys.ts';
import type { Tier } from '../../src/policy/tiers.ts';
import { expectOk, expectProblem, nextMidnightSeconds, UPGRADE } from '../helpers/http-assert.ts';
import { buildFixture, startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let dir: string;
let buildsRoot: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-http-quota-'));
  buildsRoot = await buildFixture(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const PATH = '/v1/health/years';
const NOON = Date.parse('2026-11-20T12:00:00Z');
const MIDNIGHT = Date.parse('2026-11-21T00:00:00Z');

let serial = 0;
/** A server with its own state directory (so counters start at zero) over the shared build. */
async function server(limits: Partial<Record<Tier, number>>, stateDir = join(dir, `state-${++serial}`)): Promise<FixtureServer> {
  return startFixtureServer({ buildsRoot, stateDir, limits, startAt: NOON });
}

const remaining = (r: Response) => r.headers.get('ratelimit-remaining');

describe('exhausting the Free allowance', () => {
  let s: FixtureServer;
  before(async () => {
    s = await server({ free: 3, pro: 6 });
  });
  after(async () => {
    await s?.close();
  });

  test('three requests pass, the fourth is 429 with Retry-After, Remaining 0 and upgrade', async () => {
    for (const left of ['2', '1', '0']) {
      const res = await s.get(PATH, { tier: 'free' });
      assert.equal(res.headers.get('ratelimit-limit'), '3');
      assert.equal(remaining(res), left);
      await expectOk(res, 'getAvailableYears');
    }
    const res = await s.get(PATH, { tier: 'free' });
    assert.equal(res.headers.get('retry-after'), String((MIDNIGHT - NOON) / 1000));
    assert.equal(res.headers.get('ratelimit-limit'), '3');
    assert.equal(remaining(res), '0');
    assert.equal(res.headers.get('ratelimit-reset'), String(MIDNIGHT / 1000));
    const body = await expectProblem(res, 429, PATH, { detail: 'Daily request limit reached. Resets at midnight UTC.' });
    assert.equal(body.title, 'Rate Limit Exceeded');
    assert.equal(body.upgrade, UPGRADE);
    assert.equal(body.required_tier, undefined);
  });

  test('the 429 comes before the tier gate and validation, on every endpoint', async () => {
    for (const path of ['/v1/health/plans/11111TX0010001-01', '/v1/health/plans?zip=1&age=1', '/v1/health/zips/00000']) {
      const res = await s.get(path, { tier: 'free' });
      assert.ok(res.headers.get('retry-after') !== null);
      await expectProblem(res, 429, path);
    }
    // An authentication failure still wins over the quota.
    await expectProblem(await s.get(PATH, { tier: null }), 401, PATH);
  });

  test('Retry-After counts down with the clock', async () => {
    s.now = NOON + 3_600_000 + 500;
    const res = await s.get(PATH, { tier: 'free' });
    assert.equal(res.headers.get('retry-after'), String(Math.ceil((MIDNIGHT - s.now) / 1000)));
    await expectProblem(res, 429, PATH);
  });

  test('refused requests are not counted: after an upgrade the allowance left is limit − 3', async () => {
    await setUserTier(s.store, 'user-free', 'pro', s.now);
    const res = await s.get(PATH, { tier: 'free' });
    assert.equal(res.headers.get('ratelimit-limit'), '6');
    assert.equal(remaining(res), '2', '3 counted before + this one; the refused ones did not count');
    await expectOk(res, 'getAvailableYears');
    await setUserTier(s.store, 'user-free', 'free', s.now);
  });

  test('other users are not affected', async () => {
    const res = await s.get(PATH, { tier: 'pro' });
    assert.equal(remaining(res), '5');
    await expectOk(res, 'getAvailableYears');
  });

  test('the counter resets at 00:00 UTC', async () => {
    s.now = MIDNIGHT - 1000;
    await expectProblem(await s.get(PATH, { tier: 'free' }), 429, PATH);
    s.now = MIDNIGHT;
    const res = await s.get(PATH, { tier: 'free' });
    assert.equal(remaining(res), '2');
    assert.equal(res.headers.get('ratelimit-reset'), String(nextMidnightSeconds(MIDNIGHT)));
    assert.equal(res.headers.get('ratelimit-reset'), String(MIDNIGHT / 1000 + 86_400));
    await expectOk(res, 'getAvailableYears');
  });
});

describe('counters survive a restart', () => {
  test('a new server on the same state directory continues the day’s count', async () => {
    const stateDir = join(dir, 'state-restart');
    const a = await server({ free: 3 }, stateDir);
    try {
      assert.equal(remaining(await s200(a)), '2');
      assert.equal(remaining(await s200(a)), '1');
    } finally {
      await a.close(); // flushes the quota
    }
    const b = await server({ free: 3 }, stateDir);
    try {
      assert.equal(remaining(await s200(b)), '0', 'third request of the day');
      await expectProblem(await b.get(PATH, { tier: 'free' }), 429, PATH);
    } finally {
      await b.close();
    }
    // A restart on another day starts afresh.
    const c = await startFixtureServer({ buildsRoot, stateDir, limits: { free: 3 }, startAt: MIDNIGHT + 60_000 });
    try {
      assert.equal(remaining(await s200(c)), '2');
    } finally {
      await c.close();
    }
  });

  async function s200(s: FixtureServer): Promise<Response> {
    const res = await s.get(PATH, { tier: 'free' });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    return res;
  }
});

describe('keys of one user share the counter', () => {
  test('requests with two keys of the same user draw on one allowance', async () => {
    const s = await server({ free: 4 });
    try {
      const second = await createKey(s.store, { tier: 'free', userId: 'user-free', label: 'second', now: s.now });
      const other = { headers: { authorization: `Bearer ${second.plaintext}` } };
      assert.equal(remaining(await s.get(PATH, { tier: 'free' })), '3');
      assert.equal(remaining(await s.get(PATH, other)), '2');
      assert.equal(remaining(await s.get(PATH, { tier: 'free' })), '1');
      assert.equal(remaining(await s.get(PATH, other)), '0');
      await expectProblem(await s.get(PATH, other), 429, PATH);
      await expectProblem(await s.get(PATH, { tier: 'free' }), 429, PATH);
      // A key of another user is unaffected.
      const stranger = await createKey(s.store, { tier: 'free', userId: 'user-stranger', now: s.now });
      assert.equal(remaining(await s.get(PATH, { headers: { authorization: `Bearer ${stranger.plaintext}` } })), '3');
    } finally {
      await s.close();
    }
  });
});
