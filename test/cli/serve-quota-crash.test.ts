/**
 * Quota counts survive a crash: `hpd serve` under load from this process is SIGKILLed mid-traffic; the
 * count persisted in the state store may trail the 200s the client received by at most the requests
 * served in 100 ms at the measured rate. The kill waits for a number of answers as well as a time, so a
 * slow machine measures as much traffic as a fast one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import { eventually } from '../helpers/eventually.ts';
import { prepareServe, spawnServe } from '../helpers/serve-fixture.ts';

/**
 * The kill comes after this long under load and at least this many answers (enough traffic to measure a
 * rate, however slow the machine), waited for at most LOAD_DEADLINE_MS.
 */
const LOAD_MS = 1500;
const ANSWERS = 1200;
const LOAD_DEADLINE_MS = 60_000;
const CONCURRENCY = 32;
const USER = 'user-crash';
/** The loss window the service promises, in milliseconds of traffic. */
const WINDOW_MS = 100;

test('SIGKILL under load loses at most 100 ms of quota counts', { timeout: 120_000 }, async (t) => {
  const { dir, stateDir, key, restPort, env } = await prepareServe(
    'hpd-crash-',
    { tier: 'pro', userId: USER },
    { HPD_QUOTA_PRO: '100000000' },
  );
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  t.after(() => {
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  const { child, exited } = await spawnServe(env);
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  const url = `http://127.0.0.1:${restPort}/v1/health/years`;
  const headers = { authorization: `Bearer ${key}` };
  let ok = 0;
  let other = 0;
  let stop = false;
  const started = performance.now();
  const request = (): Promise<number> =>
    new Promise((resolve, reject) => {
      get(url, { agent, headers }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      }).once('error', reject);
    });
  const loop = async (): Promise<void> => {
    while (!stop && performance.now() - started < LOAD_DEADLINE_MS) {
      try {
        const status = await request();
        if (stop) return; // answered after the kill was decided: not counted either way
        if (status === 200) ok++;
        else other++;
      } catch {
        return;
      }
    }
  };
  const loops = Array.from({ length: CONCURRENCY }, loop);
  await eventually(
    `${ANSWERS} answers and ${LOAD_MS} ms of load before the kill`,
    () => ok + other >= ANSWERS && performance.now() - started >= LOAD_MS,
    LOAD_DEADLINE_MS,
  );
  stop = true;
  child.kill('SIGKILL');
  const elapsedS = (performance.now() - started) / 1000;
  await Promise.all(loops);
  await exited;
  assert.equal(other, 0, 'every request succeeded');

  const store = openLmdbStateStore(stateDir);
  let persisted = 0;
  try {
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    for (const day of [yesterday, today]) persisted += store.loadCounters(day).get(USER) ?? 0;
  } finally {
    await store.close();
  }
  const rate = ok / elapsedS;
  const lost = Math.max(0, ok - persisted);
  const allowed = Math.ceil((rate * WINDOW_MS) / 1000);
  process.stderr.write(
    `# SIGKILL after ${elapsedS.toFixed(2)} s at ${Math.round(rate)} req/s: ${ok} answered 200, ${persisted} persisted, ${lost} lost (${((lost / rate) * 1000).toFixed(0)} ms of traffic; allowed ${allowed})\n`,
  );
  assert.ok(lost <= allowed, `lost ${lost} counts, more than ${WINDOW_MS} ms of traffic at ${Math.round(rate)} req/s (${allowed})`);
});
