/**
 * The Redis link on a redis+sentinel:// URL against real Debian redis-sentinel processes whose
 * primary, replica and sentinels all require passwords: the link reaches the primary the sentinels
 * name, follows the promoted replica after `kill -9` of the primary without being reopened, never
 * logs a password, and a wrong password is refused in one line that does not show it either.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectRedis } from '../../src/policy/redis-link.ts';
import { startSentinelRedis } from '../helpers/redis-sentinel.ts';

const PASSWORD = 'data p@ss:w/rd';
const SENTINEL_PASSWORD = 'sentinel-secret';

test('a sentinel URL with passwords: the link writes to the primary, follows the promoted replica after a kill, and logs no password', {
  timeout: 120_000,
}, async (t) => {
  const s = await startSentinelRedis({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD });
  t.after(() => s.close());
  const lines: string[] = [];
  const link = await connectRedis(s.url, { log: (l) => lines.push(l), name: 'test' });
  t.after(() => link.close());
  await link.client.set('hpd:test', 'before');
  assert.equal(((await link.client.call('ROLE')) as string[])[0], 'master');
  await s.waitReplicated();

  const oldPort = await s.primaryPort();
  await s.servers[0].kill();
  const killedAt = Date.now();
  while (link.up()) await new Promise((r) => setTimeout(r, 10));
  const newPort = await s.waitForNewPrimary(oldPort, 30_000);
  while (!link.up()) {
    assert.ok(Date.now() - killedAt < 15_000, 'the link follows the new primary within 15 s of the kill');
    await new Promise((r) => setTimeout(r, 20));
  }
  t.diagnostic(`link up on the promoted replica (${newPort}) ${Date.now() - killedAt} ms after the kill`);
  assert.equal(await link.client.get('hpd:test'), 'before', 'the replica had the write');
  await link.client.set('hpd:test', 'after');
  assert.equal(((await link.client.call('ROLE')) as string[])[0], 'master');

  assert.equal(lines.length, 2, lines.join('\n'));
  assert.match(lines[0]!, /^hpd: redis at redis\+sentinel:\/\/:\*\*\*@127\.0\.0\.1:\d+,.*\?sentinelPassword=\*\*\* unreachable \(test\)/);
  assert.match(lines[1]!, /reachable again \(test\)$/);
  for (const l of lines) assert.ok(!l.includes('p@ss') && !l.includes('p%40ss') && !l.includes(SENTINEL_PASSWORD), l);

  await assert.rejects(connectRedis(s.url.replace(encodeURIComponent(PASSWORD), 'wrong-pw'), { log: () => {} }, 2000), (err: Error) => {
    assert.equal(err.name, 'RedisUnreachableError');
    assert.ok(!err.message.includes('wrong-pw') && !err.message.includes(SENTINEL_PASSWORD), err.message);
    assert.ok(!err.message.includes('\n'), 'one line');
    return true;
  });
});
