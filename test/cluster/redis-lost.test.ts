/**
 * Redis losing hpd's data under a real cluster (Debian's HAProxy with deploy/haproxy.cfg, two `hpd serve`
 * with one REST worker each, one redis-server), as an operator meets it: FLUSHALL degrades instead of
 * blacking out (known keys 200 through the balancer, unknown ones 503, operators told by /readyz, the
 * metric and one log line), nothing starts over by itself (no CLI, restart or running instance creates
 * or adopts an epoch), and the operator's `hpd redis init` / `hpd redis adopt` are followed by running
 * and restarted instances alike.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { readEpochRecord, readRedisEpoch, REDIS_EPOCH_FILE } from '../../src/policy/redis-epoch.ts';
import { startCluster, type ClusterInstance, type TestCluster } from '../helpers/cluster.ts';
import { HPD } from '../helpers/serve-fixture.ts';

const YEARS = '/v1/health/years';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

async function get(url: string, key?: string): Promise<Outcome> {
  const res = await fetch(url, { headers: { connection: 'close', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) } });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

const readyStatus = async (inst: ClusterInstance): Promise<{ code: number; status: string }> => {
  const r = await get(`${inst.restUrl}/readyz`);
  return { code: r.status, status: (JSON.parse(r.body) as { status: string }).status };
};

async function untilReady(insts: readonly ClusterInstance[], status: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const now = await Promise.all(insts.map(readyStatus));
    if (now.every((r) => r.status === status)) return;
    if (Date.now() > deadline) throw new Error(`readyz not ${status} within 10 s: ${JSON.stringify(now)}`);
    await sleep(100);
  }
}

const unknownKey = (): string => `hpd_${randomBytes(20).toString('hex')}`;

type Backup = ReadonlyArray<readonly [string, Buffer | null]>;

describe('Redis loses its data under a two-instance cluster behind HAProxy', { timeout: 300_000 }, () => {
  let c: TestCluster;
  let raw: Redis;
  /** The dataset of the first test, with its epoch: an older backup for the last test. */
  let firstBackup: Backup = [];
  let firstKey = '';

  const backup = async (): Promise<Backup> => {
    const names = await raw.keys('hpd:*');
    return Promise.all(names.map(async (k) => [k, await raw.dumpBuffer(k)] as const));
  };
  const restore = async (b: Backup): Promise<void> => {
    await raw.flushall();
    for (const [k, v] of b) if (v !== null) await raw.restore(k, 0, v, 'REPLACE');
  };
  const recordOf = (i: number): string => join(c.instances[i]!.env.HPD_STATE_DIR!, REDIS_EPOCH_FILE);
  const stderrLines = (i: number, pattern: RegExp): number =>
    c.instances[i]!.serve!.stderr()
      .split('\n')
      .filter((l) => pattern.test(l)).length;

  /** /readyz is a REST worker's answer; the main thread, which writes the record, checks on its own beat. */
  const untilRecorded = async (i: number, epoch: string): Promise<void> => {
    for (let n = 0; n < 50 && readEpochRecord(recordOf(i))?.epoch !== epoch; n++) await sleep(100);
  };
  /** The watcher compares the health once a second (HEALTH_WATCH_MS). */
  const untilLine = async (i: number, pattern: RegExp, count = 1): Promise<void> => {
    for (let n = 0; n < 50 && stderrLines(i, pattern) < count; n++) await sleep(100);
    assert.ok(stderrLines(i, pattern) >= count, `not ${count} lines ${pattern} within 5 s:\n${c.instances[i]!.serve!.stderr()}`);
  };

  before(async () => {
    c = await startCluster({ HPD_REDIS_GRACE_SECONDS: '120' });
    raw = new Redis(c.redis.url);
    // The last test stops Redis: this client reconnects quietly.
    raw.on('error', () => {});
  });
  after(async () => {
    raw?.disconnect();
    await c?.close();
  });

  test('after FLUSHALL known keys keep getting 200 through HAProxy, unknown keys 503; readyz 200 "lost", the metric and one log line say so; a restore of the same dataset ends it', async () => {
    firstKey = c.createKey('pro');
    firstBackup = await backup();
    await raw.flushall();
    await untilReady(c.instances, 'lost');
    for (const inst of c.instances) assert.equal((await readyStatus(inst)).code, 200);
    // Two rounds of HAProxy's checks (inter 500 ms, fall 2) would have taken a failing instance out.
    await sleep(1500);
    const before = await c.lb.stats();
    const answered = (s: typeof before, server: string): number =>
      s.find((x) => x.backend === 'be_rest' && x.server === server)?.responses2xx ?? 0;
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await get(`${c.lb.restUrl}${YEARS}`, firstKey)).status);
    assert.deepEqual(new Set(statuses), new Set([200]), `known key through HAProxy: ${statuses.join(' ')}`);
    const afterStats = await c.lb.stats();
    for (const server of ['hpd1', 'hpd2']) {
      assert.ok(answered(afterStats, server) > answered(before, server), `${server} served known keys`);
      const st = afterStats.find((x) => x.backend === 'be_rest' && x.server === server);
      assert.match(st?.status ?? '', /^UP/, `${server} stays in the balancer`);
    }
    const unknown = await get(`${c.lb.restUrl}${YEARS}`, unknownKey());
    assert.equal(unknown.status, 503);
    assert.equal(unknown.headers.get('retry-after'), '5');
    assert.equal(unknown.headers.get('content-type'), 'application/problem+json');
    assert.equal((JSON.parse(unknown.body) as { status: number }).status, 503);
    // The authorization server writes nothing into the emptied Redis: a restore would drop it again.
    for (let i = 0; i < 2; i++) {
      const reg = await fetch(`${c.lb.authUrl}/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/callback'], token_endpoint_auth_method: 'none' }),
      });
      assert.equal(reg.status, 503);
      assert.equal(reg.headers.get('retry-after'), '5');
      assert.equal(((await reg.json()) as { error: string }).error, 'temporarily_unavailable');
    }
    assert.equal((await fetch(`${c.lb.authUrl}/.well-known/oauth-authorization-server`)).status, 200, 'metadata needs no storage');
    assert.deepEqual(await raw.keys('hpd:oauth:*'), [], 'no OAuth client written to the emptied Redis');
    for (const [i, inst] of c.instances.entries()) {
      const metrics = (await get(inst.metricsUrl)).body;
      assert.match(metrics, /^hpd_state_store_health\{state="lost"\} 1$/m);
      assert.match(metrics, /^hpd_state_store_health\{state="ok"\} 0$/m);
      await untilLine(i, /state store lost \(was ok\)/);
      assert.equal(stderrLines(i, /state store lost \(was ok\)/), 1, c.instances[i]!.serve!.stderr());
    }

    await restore(firstBackup);
    await untilReady(c.instances, 'ready');
    await untilLine(0, /state store ok \(was lost\)/);
    await untilLine(1, /state store ok \(was lost\)/);
    assert.equal((await get(`${c.lb.restUrl}${YEARS}`, firstKey)).status, 200);
    assert.equal((await get(`${c.lb.restUrl}${YEARS}`, unknownKey())).status, 401);
    for (const [i, inst] of c.instances.entries()) {
      assert.match((await get(inst.metricsUrl)).body, /^hpd_state_store_health\{state="ok"\} 1$/m);
      assert.equal(stderrLines(i, /state store ok \(was lost\)/), 1);
      assert.equal(stderrLines(i, /state store lost/), 1, 'one line per change, not per request');
    }
  });

  test('after FLUSHALL nothing starts over by itself: a CLI elsewhere refuses and writes nothing, the instance CLI keeps its record, a restart refuses; hpd redis init is followed by running and restarted instances', async () => {
    const key = c.createKey('pro');
    const recorded = readFileSync(recordOf(0), 'utf8');
    await raw.flushall();
    await untilReady(c.instances, 'lost');
    // Every thread has noticed (REST workers answer /readyz, the main thread logs): none writes since.
    await untilLine(0, /state store lost \(was ok\)/, 2);
    await untilLine(1, /state store lost \(was ok\)/, 2);
    const held = (await raw.keys('*')).sort();

    // A laptop, a container without its state volume: another HPD_STATE_DIR.
    const elsewhere = mkdtempSync(join(tmpdir(), 'hpd-elsewhere-'));
    try {
      for (const args of [
        ['keys', 'list'],
        ['keys', 'create', '--tier', 'pro'],
        ['users', 'list'],
      ]) {
        const r = spawnSync(process.execPath, [HPD, ...args], {
          env: { ...c.instances[0]!.env, HPD_STATE_DIR: elsewhere },
          encoding: 'utf8',
        });
        assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /^hpd: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 has no hpd epoch.*run hpd redis init once\n$/);
      }
      assert.deepEqual(readdirSync(elsewhere), [], 'nothing written in that state directory');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    assert.deepEqual((await raw.keys('*')).sort(), held, 'nothing written to Redis');
    assert.equal(await readRedisEpoch(raw), null);

    // The instance's own CLI: refused as well, and its record stays.
    const own = c.hpd(0, ['keys', 'list']);
    assert.equal(own.status, 1);
    assert.match(own.stderr, /has no hpd epoch \(.*redis-epoch records epoch [0-9a-f]{16} \(stamped /);
    assert.equal(readFileSync(recordOf(0), 'utf8'), recorded);
    const status = c.hpd(0, ['redis', 'status']);
    assert.equal(status.status, 1);
    assert.match(status.stdout, /^epoch\tnone$/m);

    // A restart refuses to come up ready on the empty store; the other instance keeps serving known keys.
    await assert.rejects(c.restart(0), /serve exited 1: .*has no hpd epoch/s);
    assert.equal(readFileSync(recordOf(0), 'utf8'), recorded);
    for (let i = 0; i < 5; i++) assert.equal((await get(`${c.lb.restUrl}${YEARS}`, key)).status, 200);
    assert.equal(await readRedisEpoch(raw), null);

    // Starting over is the operator's one command.
    const init = c.hpd(1, ['redis', 'init']);
    assert.equal(init.status, 0, init.stderr);
    assert.match(init.stdout, /^created epoch [0-9a-f]{16} \(stamped .*\) on Redis at .*, holding 0 API keys, 0 users\n$/);
    const again = c.hpd(1, ['redis', 'init']);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /already has epoch .*hpd redis adopt/);
    const epoch = (await readRedisEpoch(raw))!;
    await untilReady([c.instances[1]], 'ready');
    assert.equal((await get(`${c.instances[1].restUrl}${YEARS}`, key)).status, 401, 'started over: the old keys are gone');
    await untilRecorded(1, epoch.epoch);
    assert.deepEqual(readEpochRecord(recordOf(1)), epoch, 'the running instance recorded the new epoch');
    await c.restart(0);
    await c.waitUp();
    assert.deepEqual(readEpochRecord(recordOf(0)), epoch, 'the restarted instance adopted it');
    const fresh = c.createKey('pro');
    for (const inst of c.instances) assert.equal((await get(`${inst.restUrl}${YEARS}`, fresh)).status, 200);
  });

  test('an older dataset restored is refused (lost, a restart refuses) until hpd redis adopt, which running and restarted instances follow', async () => {
    const newer = c.createKey('pro');
    await restore(firstBackup);
    await untilReady(c.instances, 'lost');
    assert.equal((await get(`${c.lb.restUrl}${YEARS}`, newer)).status, 200, 'the replica keeps the newer dataset meanwhile');
    assert.equal((await get(`${c.lb.restUrl}${YEARS}`, firstKey)).status, 503);
    await assert.rejects(c.restart(1), /serve exited 1: .*not the dataset this instance served.*hpd redis adopt/s);

    const adopt = c.hpd(0, ['redis', 'adopt']);
    assert.equal(adopt.status, 0, adopt.stderr);
    assert.match(adopt.stdout, /^re-stamped epoch [0-9a-f]{16} .*holding 1 API keys, 1 users: every instance accepts it now\n$/);
    await untilReady([c.instances[0]], 'ready');
    assert.equal((await get(`${c.instances[0].restUrl}${YEARS}`, firstKey)).status, 200);
    assert.equal((await get(`${c.instances[0].restUrl}${YEARS}`, newer)).status, 401);
    await c.restart(1);
    await c.waitUp();
    const epoch = (await readRedisEpoch(raw))!;
    await untilRecorded(0, epoch.epoch);
    for (const i of [0, 1]) assert.deepEqual(readEpochRecord(recordOf(i)), epoch);
    for (let i = 0; i < 4; i++) assert.equal((await get(`${c.lb.restUrl}${YEARS}`, firstKey)).status, 200);
    const status = c.hpd(1, ['redis', 'status']);
    assert.equal(status.status, 0, status.stderr);
    assert.match(status.stdout, /^serve\taccepted: the recorded epoch$/m);
  });
  test('Redis unreachable: the same degrade through HAProxy (known keys 200, unknown 503), readyz 200 "degraded", the metric and one line per instance', async (t) => {
    const key = c.createKey('pro');
    let down = false;
    t.after(async () => {
      if (down) await c.redis.start();
    });
    const before = c.instances.map((_, i) => stderrLines(i, /state store degraded \(was ok\)/));
    await c.redis.stop();
    down = true;
    await untilReady(c.instances, 'degraded');
    await sleep(1500);
    for (let i = 0; i < 20; i++) assert.equal((await get(`${c.lb.restUrl}${YEARS}`, key)).status, 200);
    const unknown = await get(`${c.lb.restUrl}${YEARS}`, unknownKey());
    assert.equal(unknown.status, 503);
    assert.equal(unknown.headers.get('retry-after'), '5');
    assert.equal(unknown.headers.get('content-type'), 'application/problem+json');
    // The MCP endpoint refuses such a key with the very problem REST gives.
    const mcp = await fetch(c.lb.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${unknownKey()}`,
        connection: 'close',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    assert.equal(mcp.status, 503);
    assert.equal(mcp.headers.get('retry-after'), '5');
    const restProblem = JSON.parse(unknown.body) as { title: string; detail: string };
    const mcpProblem = (await mcp.json()) as { title: string; detail: string };
    assert.deepEqual([mcpProblem.title, mcpProblem.detail], [restProblem.title, restProblem.detail]);
    for (const [i, inst] of c.instances.entries()) {
      assert.match((await get(inst.metricsUrl)).body, /^hpd_state_store_health\{state="degraded"\} 1$/m);
      await untilLine(i, /state store degraded \(was ok\)/, before[i]! + 1);
    }
    await c.redis.start();
    down = false;
    await untilReady(c.instances, 'ready');
    assert.equal((await get(`${c.lb.restUrl}${YEARS}`, key)).status, 200);
    for (const [i] of c.instances.entries()) assert.equal(stderrLines(i, /state store degraded \(was ok\)/), before[i]! + 1);
  });
});
