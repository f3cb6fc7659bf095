/**
 * The state store's health is told once per change (a stderr line and a `state.health` event), never
 * once per check or per request, for every state including 'unavailable', which no Redis event marks.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../../src/observability/logger.ts';
import { watchStoreHealth } from '../../src/observability/store-health-watch.ts';
import type { StoreHealth } from '../../src/policy/state-store.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('one line and one event per change of the store health, each state named with what to do', async (t) => {
  let health: StoreHealth = 'ok';
  const lines: string[] = [];
  const out = new PassThrough();
  let json = '';
  out.on('data', (d: Buffer) => (json += d.toString()));
  const logger = createLogger({ destination: out });
  const watch = watchStoreHealth({ health: () => health }, { logger, write: (l) => lines.push(l), intervalMs: 10 });
  t.after(() => watch.close());
  await sleep(60);
  assert.deepEqual(lines, [], 'nothing while nothing changes');
  for (const next of ['degraded', 'unavailable', 'ok', 'lost', 'ok'] as const) {
    health = next;
    await sleep(60);
  }
  assert.equal(lines.length, 5, lines.join('\n'));
  assert.match(lines[0]!, /^hpd: state store degraded \(was ok\): Redis is unreachable: known API keys are served/);
  assert.match(lines[1]!, /^hpd: state store unavailable \(was degraded\): .*every authenticated request gets 503/);
  assert.match(lines[2]!, /^hpd: state store ok \(was unavailable\)/);
  assert.match(lines[3]!, /^hpd: state store lost \(was ok\): .*hpd redis adopt \/ hpd redis init/);
  const events = json
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; health: string; previous: string; level: string });
  assert.deepEqual(
    events.map((e) => [e.event, e.health, e.previous, e.level]),
    [
      ['state.health', 'degraded', 'ok', 'warn'],
      ['state.health', 'unavailable', 'degraded', 'error'],
      ['state.health', 'ok', 'unavailable', 'info'],
      ['state.health', 'lost', 'ok', 'warn'],
      ['state.health', 'ok', 'lost', 'info'],
    ],
  );
});
