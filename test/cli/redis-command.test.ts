/**
 * `hpd redis` on a real redis-server: help, one readable line and a non-zero exit for every mistake or
 * failure, and init / adopt / status on a Redis that starts without hpd's epoch. The commands never
 * touch the state directory: only `hpd serve` writes its record.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { readRedisEpoch, REDIS_EPOCH_FILE } from '../../src/policy/redis-epoch.ts';
import { startTestRedis } from '../helpers/redis-server.ts';
import { runHpd, type HpdRun } from '../helpers/run-hpd.ts';
import { freePorts } from '../helpers/services.ts';

const oneLine = (r: HpdRun, code: number, pattern: RegExp): void => {
  assert.equal(r.code, code, r.stderr);
  assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, r.stderr);
  assert.match(r.stderr, pattern);
};

test('hpd redis: help, and one line with a non-zero exit for a wrong subcommand, option, setting or an unreachable Redis', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-redis-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ...process.env, HPD_STATE_DIR: join(dir, 'state'), HPD_REDIS_URL: '' };
  const help = await runHpd(['redis', '--help'], { env, cwd: dir });
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: hpd redis <command>/);
  for (const word of ['init', 'adopt', 'status']) assert.match(help.stdout, new RegExp(`^  ${word} `, 'm'));
  assert.equal((await runHpd(['redis'], { env, cwd: dir })).code, 2);
  assert.match((await runHpd(['--help'], { env, cwd: dir })).stdout, /^ {2}redis {4}/m);

  oneLine(await runHpd(['redis', 'adpot'], { env, cwd: dir }), 2, /^hpd: .*adpot.*did you mean adopt/);
  oneLine(await runHpd(['redis', 'init', '--force'], { env, cwd: dir }), 2, /^hpd: redis init: unknown option --force/);
  oneLine(await runHpd(['redis', 'status'], { env, cwd: dir }), 2, /^hpd: hpd redis works on the shared Redis: set HPD_REDIS_URL/);
  const [closed] = (await freePorts(1)) as [number];
  const unreachable = { ...env, HPD_REDIS_URL: `redis://:secret@127.0.0.1:${closed}/0` };
  const r = await runHpd(['redis', 'init'], { env: unreachable, cwd: dir, timeoutMs: 20_000 });
  oneLine(r, 1, /^hpd: cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/0/);
  assert.ok(!r.stderr.includes('secret'));
});

test('hpd redis init creates the epoch once, adopt re-stamps it, status says whether hpd serve would accept it; the state directory is never written', {
  timeout: 60_000,
}, async (t) => {
  const redis = await startTestRedis({ persistent: false, epoch: false });
  t.after(() => redis.close());
  const raw = new Redis(redis.url);
  t.after(() => raw.disconnect());
  const dir = mkdtempSync(join(tmpdir(), 'hpd-redis-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const stateDir = join(dir, 'state');
  const env = { ...process.env, HPD_STATE_DIR: stateDir, HPD_REDIS_URL: redis.url };
  const run = (...args: string[]): Promise<HpdRun> => runHpd(['redis', ...args], { env, cwd: dir });

  const none = await run('status');
  assert.match(none.stdout, /^epoch\tnone$/m);
  assert.match(none.stdout, /^record\t.*redis-epoch: none \(a new host: hpd serve joins\)$/m);
  oneLine(none, 1, /^hpd: hpd serve with .* would be refused: Redis has no epoch/);
  oneLine(await run('adopt'), 1, /^hpd: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 has no hpd epoch: nothing to adopt.*hpd redis init\n$/);
  assert.equal(await raw.dbsize(), 0, 'refused commands write nothing');

  const init = await run('init');
  assert.equal(init.code, 0, init.stderr);
  const created = (await readRedisEpoch(raw))!;
  assert.equal(
    init.stdout,
    `created epoch ${created.epoch} (stamped ${new Date(Math.floor(created.stamp / 1000)).toISOString()}) on Redis at ${redis.url}, holding 0 API keys, 0 users\n`,
  );
  oneLine(await run('init'), 1, new RegExp(`^hpd: Redis at .* already has epoch ${created.epoch} .*hpd redis adopt\\n$`));
  assert.deepEqual(await readRedisEpoch(raw), created, 'a second init changes nothing');

  const joined = await run('status');
  assert.equal(joined.code, 0, joined.stderr);
  assert.match(joined.stdout, new RegExp(`^epoch\\tepoch ${created.epoch} \\(stamped `, 'm'));
  assert.match(joined.stdout, /^holds\t0 API keys, 0 users, generation 0$/m);
  assert.match(joined.stdout, /^serve\taccepted: hpd serve joins this epoch$/m);

  // A record of another dataset, stamped after Redis's: refused until adopt.
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(join(stateDir, REDIS_EPOCH_FILE), `fedcba9876543210 ${created.stamp + 1}\n`);
  const other = await run('status');
  oneLine(other, 1, /would be refused: another dataset than the recorded one/);
  const adopt = await run('adopt');
  assert.equal(adopt.code, 0, adopt.stderr);
  assert.match(
    adopt.stdout,
    new RegExp(`^re-stamped epoch ${created.epoch} \\(stamped .*\\) on Redis at .*: every instance accepts it now\\n$`),
  );
  const adopted = (await readRedisEpoch(raw))!;
  assert.ok(adopted.stamp > created.stamp);
  const accepted = await run('status');
  assert.equal(accepted.code, 0, accepted.stderr);
  assert.match(accepted.stdout, /^serve\taccepted: stamped by an operator since the record \(hpd serve adopts it\)$/m);
  assert.deepEqual(readdirSync(stateDir), [REDIS_EPOCH_FILE], 'nothing else in the state directory');
  assert.equal(
    readFileSync(join(stateDir, REDIS_EPOCH_FILE), 'utf8'),
    `fedcba9876543210 ${created.stamp + 1}\n`,
    "the record is hpd serve's alone",
  );
});
