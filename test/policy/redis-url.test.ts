/**
 * The forms HPD_REDIS_URL takes (src/policy/redis-url.ts): one server, or sentinels and a master name;
 * a malformed value is refused with the reason, and no password ever shows in a log line, in
 * `hpd config`'s masking or in an error message, whether the URL parses or not; a start waits for
 * a Redis that answers within its timeout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maskRedisUrl, parseRedisUrl } from '../../src/policy/redis-url.ts';
import { maskUrlPassword, readSetting } from '../../src/config/settings.ts';
import { connectRedis, redactRedisUrl } from '../../src/policy/redis-link.ts';
import { startTestRedis } from '../helpers/redis-server.ts';

test('a sentinel URL names the sentinels (26379 by default), the master, the database and both sets of credentials', () => {
  assert.deepEqual(
    parseRedisUrl('redis+sentinel://app:p%40ss@10.0.0.1:26380,sentinel-b,[::1]:5000/mymaster/3?sentinelPassword=s3&sentinelUsername=sen'),
    {
      kind: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26380 },
        { host: 'sentinel-b', port: 26379 },
        { host: '::1', port: 5000 },
      ],
      name: 'mymaster',
      db: 3,
      username: 'app',
      password: 'p@ss',
      sentinelUsername: 'sen',
      sentinelPassword: 's3',
    },
  );
  assert.deepEqual(parseRedisUrl('redis+sentinel://:pw@h:1/m'), {
    kind: 'sentinel',
    sentinels: [{ host: 'h', port: 1 }],
    name: 'm',
    db: 0,
    password: 'pw',
  });
  assert.deepEqual(parseRedisUrl('rediss://u:p@db.example:6380/2'), { kind: 'server', url: 'rediss://u:p@db.example:6380/2' });
});

test('a malformed URL is refused with what is wrong, as one line naming HPD_REDIS_URL, the password masked', () => {
  const cases: Array<[string, RegExp]> = [
    ['http://u:secret@h:6379', /scheme must be redis:\/\/, rediss:\/\/ or redis\+sentinel:\/\//],
    ['redis+sentinel://u:secret@h:26379', /no master name/],
    ['redis+sentinel://u:secret@h:26379/', /no master name/],
    ['redis+sentinel://u:secret@h:26379,/m', /a sentinel address is empty/],
    ['redis+sentinel://u:secret@h:99999/m', /sentinel address "h:99999" has no port from 1 to 65535/],
    ['redis+sentinel://u:secret@h x:1/m', /sentinel address "h x:1" is not host or host:port/],
    ['redis+sentinel://u:secret@h/m/x', /database "x" is not a number/],
    ['redis+sentinel://u:secret@h/m/0/extra', /the path must be/],
    ['redis+sentinel://u:secret@h/m?password=x', /unknown parameter "password"/],
    ['redis://', /no host/],
  ];
  for (const [url, reason] of cases) {
    assert.throws(
      () => readSetting('redisUrl', { HPD_REDIS_URL: url }),
      (err: Error) => {
        assert.match(err.message, /^HPD_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL .*redis\+sentinel:\/\//, url);
        assert.match(err.message, reason, url);
        assert.ok(!err.message.includes('secret'), `password shown: ${err.message}`);
        assert.ok(!err.message.includes('\n'), 'one line');
        return true;
      },
    );
  }
});

test('passwords are masked in every form, parsed or not; the rest stays readable', () => {
  const url = 'redis+sentinel://app:secret@h1:26379,h2:26379/mymaster/0?sentinelPassword=other&sentinelUsername=sen';
  assert.equal(maskUrlPassword(url), 'redis+sentinel://app:****@h1:26379,h2:26379/mymaster/0?sentinelPassword=****&sentinelUsername=sen');
  assert.equal(redactRedisUrl(url), 'redis+sentinel://app:***@h1:26379,h2:26379/mymaster/0?sentinelPassword=***&sentinelUsername=sen');
  assert.equal(redactRedisUrl('redis://:secret@127.0.0.1:6379/0'), 'redis://:***@127.0.0.1:6379/0');
  assert.equal(maskUrlPassword('redis://user:secret@db:6379'), 'redis://user:****@db:6379');
  assert.equal(maskUrlPassword('redis://db:6379/0'), 'redis://db:6379/0');
  // Not a URL at all, with a password in it: still masked.
  assert.equal(maskRedisUrl('nonsense://u:secret@', '*'), 'nonsense://u:*@');
});

test('connectRedis refuses a malformed URL at once, in one line without the password', async () => {
  await assert.rejects(connectRedis('redis+sentinel://u:secret@h:26379', { log: () => {} }), (err: Error) => {
    assert.equal(err.name, 'RedisUnreachableError');
    assert.match(err.message, /no master name/);
    assert.ok(!err.message.includes('secret'), err.message);
    return true;
  });
});

test('connectRedis waits for a Redis that answers within the start timeout (a start during a failover), and names the last error when none does', {
  timeout: 30_000,
}, async (t) => {
  const redis = await startTestRedis({ persistent: false });
  t.after(() => redis.close());
  await redis.stop();
  const connecting = connectRedis(redis.url, { log: () => {} }, 5000);
  await new Promise((r) => setTimeout(r, 1000));
  await redis.start();
  const link = await connecting;
  t.after(() => link.close());
  assert.equal(await link.client.ping(), 'PONG');

  await redis.stop();
  const started = Date.now();
  await assert.rejects(
    connectRedis(redis.url, { log: () => {} }, 1000),
    /cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+\/0 within 1 s: .*ECONNREFUSED/,
  );
  assert.ok(Date.now() - started >= 1000, 'it kept trying for the whole start timeout');
});
