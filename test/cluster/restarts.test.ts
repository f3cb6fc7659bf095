/**
 * Restarts and deaths under steady load through the real balancer: Debian's HAProxy with
 * deploy/haproxy.cfg in front of two `hpd serve` (one REST worker each) on one redis-server, and a client
 * that sends GETs at a fixed rate over many keep-alive connections and never retries. Rolling restarts
 * (SIGTERM, wait for the exit, start again, wait until HAProxy has it UP) and a `kill -9` of one of the
 * two instances must not cost a single request.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';
import { countsSince, startSteadyLoad, type LoadCounts, type SteadyLoad } from '../helpers/steady-load.ts';

const RATE = 2000;
const CONNECTIONS = 64;
const SEARCH = '/v1/health/plans?zip=77002&age=40&year=2025';
const DRAIN_SECONDS = 5;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const figures = (c: LoadCounts): string =>
  `${c.sent} requests, ${c.failed} failed${c.failed > 0 ? ` ${JSON.stringify(c.failures)}` : ''}${c.late > 0 ? `, ${c.late} not sent (client behind)` : ''}`;

describe('restarts and deaths under steady load through HAProxy', { timeout: 300_000 }, () => {
  let c: TestCluster;
  let key: string;
  before(async () => {
    c = await startCluster({
      HPD_DRAIN_SECONDS: String(DRAIN_SECONDS),
      HPD_QUOTA_ENTERPRISE: String(Number.MAX_SAFE_INTEGER),
    });
    key = c.createKey('enterprise');
  });
  after(() => c?.close());

  const load = (): SteadyLoad => {
    const url = new URL(c.lb.restUrl);
    return startSteadyLoad({
      host: url.hostname,
      port: Number(url.port),
      path: SEARCH,
      headers: { authorization: `Bearer ${key}` },
      rate: RATE,
      connections: CONNECTIONS,
      maxConnections: CONNECTIONS * 4,
    });
  };

  test('5 rolling restarts (SIGTERM, exit, start, UP in HAProxy) under 2,000 GET/s: 0 failed requests, each exit within the drain', async (t) => {
    const running = load();
    t.after(() => running.stop());
    await sleep(1000);
    for (let r = 0; r < 5; r++) {
      const i = r % 2;
      const before = running.counts();
      const started = performance.now();
      const { exitMs, code } = await c.restart(i);
      await c.waitUp(2);
      const during = countsSince(before, running.counts());
      t.diagnostic(
        `restart ${r + 1} (${c.instances[i].name}): SIGTERM to exit ${Math.round(exitMs)} ms (code ${code}), back UP after ${Math.round(performance.now() - started)} ms; ${figures(during)}`,
      );
      assert.equal(code, 0, 'the instance exits 0 after its drain');
      assert.ok(exitMs < DRAIN_SECONDS * 1000 + 5000, `exited ${Math.round(exitMs)} ms after SIGTERM`);
    }
    await sleep(500);
    const total = await running.stop();
    t.diagnostic(`5 rolling restarts in all: ${figures(total)}`);
    assert.ok(total.sent > 5 * RATE, `the load ran: ${figures(total)}`);
    assert.equal(total.failed, 0, figures(total));
  });

  test('kill -9 of one of two instances under 2,000 GET/s: 0 failed GETs, the instance is DOWN in HAProxy within 3 s', async (t) => {
    t.after(async () => {
      if (c.instances[1].serve === null) {
        await c.restart(1);
        await c.waitUp(2);
      }
    });
    const running = load();
    t.after(() => running.stop());
    await sleep(1000);
    const before = running.counts();
    const killedAt = performance.now();
    await c.kill(1);
    let downMs = Number.NaN;
    while (performance.now() - killedAt < 3000) {
      const s = (await c.lb.stats()).find((x) => x.backend === 'be_rest' && x.server === 'hpd2');
      if (s?.status.startsWith('DOWN') === true) {
        downMs = performance.now() - killedAt;
        break;
      }
      await sleep(20);
    }
    await sleep(1500);
    const during = countsSince(before, running.counts());
    const total = await running.stop();
    t.diagnostic(
      `kill -9 of hpd2: DOWN in HAProxy after ${Math.round(downMs)} ms; from the kill on: ${figures(during)}; whole run: ${figures(total)}`,
    );
    assert.ok(Number.isFinite(downMs), 'hpd2 marked DOWN within 3 s of the kill');
    assert.ok(during.sent > RATE, `the load ran: ${figures(during)}`);
    assert.equal(total.failed, 0, figures(total));
  });
});
