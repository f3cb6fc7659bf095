/**
 * @module New accounts a server creates in an hour, from every address together (HPD_SIGNUPS_PER_HOUR).
 *
 * The sign-up form is open to anyone and each account is kept (a user record in the state store, ~0.5 KB measured),
 * while the log-in throttle bounds sign-ups per client address only: a client with many addresses (an
 * IPv6 block, a botnet) could grow the store without end. {@link ALL_SIGNUPS_PER_HOUR} bounds that growth;
 * past it the form answers 429 with the wait, for everyone, until the hour's allowance refills. A person
 * signs up once, so a real server sees far fewer. The buckets are the registration limit's (one per
 * address, one for the server, in Redis when instances share it), with the per-address bucket as wide as
 * the server's: per-address pacing stays the log-in throttle's.
 */
import type { Redis } from 'ioredis';
import { createRedisRegistrationLimit } from './redis-registration-limit.ts';
import { createRegistrationLimit, type RegistrationLimit } from './registration-limit.ts';

export const ALL_SIGNUPS_PER_HOUR = 1_000;

/** The sign-up allowance of `perHour` accounts (0: none): in this process, or shared by every instance on `redis`. */
export function createSignupLimit(clock: () => number, perHour: number, redis?: Redis): RegistrationLimit | null {
  if (perHour === 0) return null;
  if (redis === undefined) return createRegistrationLimit(clock, perHour, perHour);
  return createRedisRegistrationLimit(redis, { clock, prefix: 'hpd:throttle:signup:', perHour, allPerHour: perHour });
}
