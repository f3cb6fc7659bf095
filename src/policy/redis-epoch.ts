/**
 * @module The epoch of hpd's Redis dataset: which dataset an instance serves, and the one operator act
 * that may change it.
 *
 * Redis holds `hpd:epoch` (a random id, set once per dataset) and `hpd:epoch-stamp` (Redis's own `TIME`,
 * in microseconds, at the last `hpd redis init` or `hpd redis adopt`). Each `hpd serve` records both in
 * `<HPD_STATE_DIR>/redis-epoch` when it joins. No process and no CLI command ever creates an epoch or
 * switches to another one by itself: an emptied Redis (FLUSHALL, a restart without persistence) has no
 * epoch, and a Redis restored from an older backup has another one, and taking either at its word
 * would revoke every key at once. So:
 *
 * - Redis without an epoch: every process refuses (a new deployment starts with `hpd redis init`).
 * - A state directory without a record joins whatever epoch Redis has (a new host, a CLI elsewhere).
 * - The recorded epoch: joined (a restore of the same dataset is that).
 * - Another epoch: adopted only when its stamp is newer than the recorded stamp, i.e. an operator ran
 *   init or adopt since this instance joined; otherwise refused (at start) or `lost` (while running).
 *
 * The stamp orders operator acts by Redis's clock alone, so hosts' clocks never matter, and a restored
 * backup carries the stamp it was taken with, which is older than what instances recorded since. A
 * record from before stamps (the epoch alone) counts as stamp 0: any init or adopt is newer. The one
 * assumption: a Redis that replaces another has a clock that is not behind the old one's (NTP); if it
 * is, instances refuse its adopt as they would a backup, and `hpd redis status` on a host shows it.
 *
 * Only `hpd serve`'s main thread writes the record: a CLI command run with another state directory (a
 * laptop, a container without its volume) must leave no trace, and REST workers follow the main thread.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Redis } from 'ioredis';
import { REDIS_PREFIX } from './redis-link.ts';

export const EPOCH_KEY = `${REDIS_PREFIX}epoch`;
export const EPOCH_STAMP_KEY = `${REDIS_PREFIX}epoch-stamp`;
/** The file of the state directory that records the epoch of the Redis dataset this instance serves. */
export const REDIS_EPOCH_FILE = 'redis-epoch';

export interface Epoch {
  readonly epoch: string;
  /** Redis `TIME` in microseconds at the last init/adopt; 0 when unknown (from before stamps). */
  readonly stamp: number;
}

/** How a process that knows `recorded` (or nothing) must treat what Redis holds now. */
export type EpochVerdict =
  | { readonly kind: 'none' }
  | { readonly kind: 'same' | 'join' | 'adopt'; readonly epoch: Epoch }
  | { readonly kind: 'other'; readonly epoch: Epoch };

export function judgeEpoch(current: Epoch | null, recorded: Epoch | undefined): EpochVerdict {
  if (current === null) return { kind: 'none' };
  if (recorded === undefined) return { kind: 'join', epoch: current };
  if (recorded.epoch === current.epoch) return { kind: 'same', epoch: current };
  return { kind: current.stamp > recorded.stamp ? 'adopt' : 'other', epoch: current };
}

/** A stamp as people read it (Redis's clock, UTC). */
export function stampText(stamp: number): string {
  return stamp === 0 ? 'unstamped' : new Date(Math.floor(stamp / 1000)).toISOString();
}

export function describeEpoch(e: Epoch): string {
  return `epoch ${e.epoch} (${e.stamp === 0 ? 'unstamped' : `stamped ${stampText(e.stamp)}`})`;
}

/** The record of a state directory, or undefined when there is none. Legacy records hold the epoch alone. */
export function readEpochRecord(file: string): Epoch | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const [epoch, stamp] = text.trim().split(/\s+/);
  if (epoch === undefined || epoch === '') return undefined;
  const n = Number(stamp ?? 0);
  return { epoch, stamp: Number.isSafeInteger(n) && n > 0 ? n : 0 };
}

/** Replaces the record in one rename, so a crash never leaves half a file. */
export function writeEpochRecord(file: string, e: Epoch): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${e.epoch} ${e.stamp}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/** Redis's epoch, or null when it has none. */
export async function readRedisEpoch(redis: Redis): Promise<Epoch | null> {
  const [epoch, stamp] = await redis.mget(EPOCH_KEY, EPOCH_STAMP_KEY);
  if (epoch === null || epoch === undefined) return null;
  const n = Number(stamp ?? 0);
  return { epoch, stamp: Number.isSafeInteger(n) && n > 0 ? n : 0 };
}

/**
 * KEYS: epoch, stamp. ARGV: new epoch. Sets both when there is no epoch; returns {created, epoch, stamp}.
 * TIME in a script is allowed since Redis 5 (effects are replicated, not the script).
 */
const INIT = `
local e = redis.call('GET', KEYS[1])
if e then return { 0, e, redis.call('GET', KEYS[2]) or '0' } end
local t = redis.call('TIME')
local stamp = tostring(tonumber(t[1]) * 1000000 + tonumber(t[2]))
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], stamp)
return { 1, ARGV[1], stamp }
`;

/** KEYS: epoch, stamp. A new stamp, later than the previous one even if Redis's clock went back. */
const ADOPT = `
local e = redis.call('GET', KEYS[1])
if not e then return false end
local t = redis.call('TIME')
local stamp = tonumber(t[1]) * 1000000 + tonumber(t[2])
local previous = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if stamp <= previous then stamp = previous + 1 end
redis.call('SET', KEYS[2], tostring(stamp))
return { e, tostring(stamp) }
`;

/**
 * `hpd redis init`: gives a Redis without an epoch a new one (whatever hpd data it holds is kept: a
 * deployment from before epochs). Atomic: of several concurrent inits exactly one creates.
 * Returns the epoch Redis has afterwards and whether this call created it.
 */
export async function initRedisEpoch(redis: Redis): Promise<{ readonly created: boolean; readonly epoch: Epoch }> {
  const [created, epoch, stamp] = (await redis.eval(INIT, 2, EPOCH_KEY, EPOCH_STAMP_KEY, randomBytes(8).toString('hex'))) as [
    number,
    string,
    string,
  ];
  return { created: created === 1, epoch: { epoch, stamp: Number(stamp) } };
}

/** `hpd redis adopt`: re-stamps Redis's epoch so every instance accepts it; null when it has none. */
export async function adoptRedisEpoch(redis: Redis): Promise<Epoch | null> {
  const r = (await redis.eval(ADOPT, 2, EPOCH_KEY, EPOCH_STAMP_KEY)) as [string, string] | null;
  return r === null ? null : { epoch: r[0], stamp: Number(r[1]) };
}
