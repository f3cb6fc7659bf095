/**
 * @module Throttling of the log-in and sign-up forms, in memory: exponential back-off per account and
 * per client address, checked BEFORE any password is hashed so that a flood of guesses is refused for
 * the price of a Map lookup instead of 32 MiB and ~75 ms of scrypt each.
 *
 * Figures (see the POLICIES below):
 * - Account (normalised e-mail, whether or not it has an account, so the answer reveals nothing):
 *   5 failures are free; after the n-th failure (n ≥ 5) the next attempt must wait 2^(n-5) s
 *   (1 s, 2 s, 4 s, …), capped at 5 minutes, reached after 14 failures. A success clears the account.
 *   The cap is low on purpose: anyone can fail logins for someone else's address, and the worst
 *   they can do is make the real person wait at most 5 minutes for their next try. Refused attempts
 *   do not count, so hammering a blocked account does not push its block further out.
 * - Client address: the same doubling after 10 failures (a NAT or office network shares one address,
 *   so it is more lenient), capped at 15 minutes. A success does NOT clear it: otherwise an attacker
 *   with one valid account of their own could reset their address between guesses.
 * - Sign-up, per client address: every attempt counts (a refusal such as "already exists" answers an
 *   enumeration question, and a success creates an account), 10 free, then the same doubling, capped
 *   at 15 minutes.
 * - Failures are forgotten one hour after the last one.
 * - In-flight attempts count like failures until they finish, and once back-off applies only one
 *   attempt per key may run at a time: 300 parallel guesses cannot all slip past before the first
 *   failure is recorded. At most 5 of them reach password verification for one account.
 *
 * Memory: each table holds at most MAX_ENTRIES (10 000) keys, kept in least-recently-used order.
 * When full, entries with nothing left to remember (no failures within the window, nothing in flight)
 * are dropped first, then the least recently used ones, so an attacker rotating e-mail addresses or addresses cannot grow it (≈ 10 000 × ~0.5 KB per
 * table at most). The price of the bound: someone flooding 10 000 fresh keys can push a victim's entry
 * out and so reset its counter; the per-address table makes that flood itself slow from one address.
 *
 * State lives in this process only: a restart forgets it, and several processes behind one name
 * would each allow their own share. Several instances sharing a Redis use RedisLoginThrottle
 * (redis-login-throttle.ts) instead: same figures, same AttemptThrottle interface.
 */

export interface ThrottlePolicy {
  /** Failures allowed before back-off starts. */
  readonly freeFailures: number;
  /** The wait after the first failure beyond the free ones; doubled for each further one. */
  readonly baseDelayMs: number;
  /** Longest wait ever imposed. */
  readonly maxDelayMs: number;
  /** Failures are forgotten this long after the most recent one. */
  readonly windowMs: number;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The figures in the module notes. */
export const POLICIES = Object.freeze({
  account: Object.freeze({ freeFailures: 5, baseDelayMs: SECOND, maxDelayMs: 5 * MINUTE, windowMs: HOUR }),
  address: Object.freeze({ freeFailures: 10, baseDelayMs: SECOND, maxDelayMs: 15 * MINUTE, windowMs: HOUR }),
  signup: Object.freeze({ freeFailures: 10, baseDelayMs: SECOND, maxDelayMs: 15 * MINUTE, windowMs: HOUR }),
} satisfies Record<string, ThrottlePolicy>);

/** Keys kept per table; see the module notes for why and what it costs. */
export const MAX_ENTRIES = 10_000;

interface Entry {
  failures: number;
  lastFailureAt: number;
  /** No attempt may start before this (0: none pending). */
  blockedUntil: number;
  inFlight: number;
}

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** One table of keys under one policy. Exported for tests; the server uses LoginThrottle. */
export class BackoffTable {
  readonly #policy: ThrottlePolicy;
  readonly #clock: () => number;
  readonly #maxEntries: number;
  /** Insertion order = least recently used first (every touch re-inserts). */
  readonly #entries = new Map<string, Entry>();

  constructor(policy: ThrottlePolicy, clock: () => number, maxEntries: number = MAX_ENTRIES) {
    this.#policy = policy;
    this.#clock = clock;
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Whether an attempt for `key` may start now; does not reserve it (see `start`). */
  check(key: string): ThrottleDecision {
    const now = this.#clock();
    const entry = this.#entries.get(key);
    if (entry === undefined) return { allowed: true };
    this.#forgetExpired(entry, now);
    const { freeFailures } = this.#policy;
    if (entry.failures + entry.inFlight < freeFailures) return { allowed: true };
    if (entry.failures >= freeFailures && entry.inFlight === 0 && now >= entry.blockedUntil) return { allowed: true };
    // Either waiting out a back-off, or the free attempts are all in flight: their outcome decides
    // whether the next one is free, so ask for a second.
    const waitMs = Math.max(entry.blockedUntil - now, SECOND);
    return { allowed: false, retryAfterSeconds: Math.ceil(waitMs / SECOND) };
  }

  /** Reserves an attempt that `check` allowed; every `start` must be followed by one `finish`. */
  start(key: string): void {
    const entry = this.#touch(key);
    entry.inFlight += 1;
  }

  /**
   * Ends an attempt. `failed` counts it and may start a back-off; `reset` (a successful log-in) forgets
   * the key altogether; neither (an attempt that errored out) only releases the reservation.
   */
  finish(key: string, outcome: 'failed' | 'reset' | 'released'): void {
    if (outcome === 'reset') {
      this.#entries.delete(key);
      return;
    }
    const now = this.#clock();
    const entry = this.#touch(key);
    entry.inFlight = Math.max(0, entry.inFlight - 1);
    if (outcome === 'released') return;
    this.#forgetExpired(entry, now);
    entry.failures += 1;
    entry.lastFailureAt = now;
    const beyond = entry.failures - this.#policy.freeFailures;
    if (beyond >= 0) {
      // 2^beyond seconds; the exponent is clamped so the arithmetic stays exact long after the cap.
      const delay = Math.min(this.#policy.baseDelayMs * 2 ** Math.min(beyond, 40), this.#policy.maxDelayMs);
      entry.blockedUntil = now + delay;
    }
  }

  #forgetExpired(entry: Entry, now: number): void {
    if (entry.failures > 0 && now - entry.lastFailureAt >= this.#policy.windowMs) {
      entry.failures = 0;
      entry.blockedUntil = 0;
    }
  }

  #isIdle(entry: Entry, now: number): boolean {
    return entry.inFlight === 0 && (entry.failures === 0 || now - entry.lastFailureAt >= this.#policy.windowMs);
  }

  /** The entry for `key`, created if needed, moved to the most-recently-used end. */
  #touch(key: string): Entry {
    let entry = this.#entries.get(key);
    if (entry !== undefined) {
      this.#entries.delete(key);
    } else {
      entry = { failures: 0, lastFailureAt: 0, blockedUntil: 0, inFlight: 0 };
      if (this.#entries.size >= this.#maxEntries) this.#makeRoom();
    }
    this.#entries.set(key, entry);
    return entry;
  }

  #makeRoom(): void {
    const now = this.#clock();
    // Keys with nothing left to remember go first, wherever they are: a live back-off must not be
    // pushed out by a crowd of keys that expired. A full scan only happens when the table is full,
    // costs microseconds for 10 000 entries, and usually frees many slots at once.
    for (const [key, entry] of this.#entries) {
      if (this.#isIdle(entry, now)) this.#entries.delete(key);
    }
    // Still full: everything is live, so the least recently used gives way.
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
  }
}

/** A reserved attempt; settle it exactly once (later calls are ignored). */
export interface ThrottledAttempt {
  /** The password (or sign-up) was refused: counts against every key. */
  failed(): void;
  /** The log-in succeeded: the account is cleared; the address keeps its count (a sign-up counts it). */
  succeeded(): void;
  /** Something unexpected happened before an answer: release without counting. */
  released(): void;
}

export type ThrottleResult = { allowed: true; attempt: ThrottledAttempt } | { allowed: false; retryAfterSeconds: number };

/**
 * The key for a client address: IPv4-mapped IPv6 as plain IPv4, other IPv6 addresses by their /64
 * (one subscriber usually holds a whole /64, so per-address keys would be free to rotate).
 */
export function addressKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped !== null) return mapped[1];
  if (!lower.includes(':')) return lower;
  const [head, tail = ''] = lower.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = lower.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** What the interaction pages reserve attempts from; the Redis version answers asynchronously. */
export interface AttemptThrottle {
  /** Reserves a log-in attempt for the (already normalised) e-mail from a client address, or says how long to wait. */
  login(normalizedEmail: string, address: string | undefined): ThrottleResult | Promise<ThrottleResult>;
  /** Reserves a sign-up attempt from a client address; its `succeeded()` counts like `failed()`. */
  signup(address: string | undefined): ThrottleResult | Promise<ThrottleResult>;
}

/** The three tables of the log-in page and one clock. */
export class LoginThrottle implements AttemptThrottle {
  readonly #account: BackoffTable;
  readonly #address: BackoffTable;
  readonly #signup: BackoffTable;

  constructor(clock: () => number, maxEntries: number = MAX_ENTRIES) {
    this.#account = new BackoffTable(POLICIES.account, clock, maxEntries);
    this.#address = new BackoffTable(POLICIES.address, clock, maxEntries);
    this.#signup = new BackoffTable(POLICIES.signup, clock, maxEntries);
  }

  /**
   * Reserves a log-in attempt for the (already normalised) e-mail from a client address, or says
   * how long to wait.
   */
  login(normalizedEmail: string, address: string | undefined): ThrottleResult {
    return reserve(
      [
        [this.#account, normalizedEmail],
        [this.#address, addressKey(address)],
      ],
      true,
    );
  }

  /**
   * Reserves a sign-up attempt from a client address. Every attempt counts, so `succeeded()` counts
   * like `failed()` here: a flood of successful sign-ups is as much a flood.
   */
  signup(address: string | undefined): ThrottleResult {
    return reserve([[this.#signup, addressKey(address)]], false);
  }

  /** Keys held per table, for tests and diagnostics. */
  sizes(): { account: number; address: number; signup: number } {
    return { account: this.#account.size, address: this.#address.size, signup: this.#signup.size };
  }
}

function reserve(keys: ReadonlyArray<readonly [BackoffTable, string]>, successClearsFirstKey: boolean): ThrottleResult {
  let wait = 0;
  for (const [table, key] of keys) {
    const decision = table.check(key);
    if (!decision.allowed) wait = Math.max(wait, decision.retryAfterSeconds);
  }
  // All or nothing: a refused attempt reserves no key, so it costs the attacker's targets nothing.
  if (wait > 0) return { allowed: false, retryAfterSeconds: wait };
  for (const [table, key] of keys) table.start(key);
  return allowedAttempt(successClearsFirstKey, (outcomeFor) => {
    for (const [i, [table, key]] of keys.entries()) table.finish(key, outcomeFor(i));
  });
}

/** How each reserved key ends, by its position in the reservation. */
export type SettleOutcome = 'failed' | 'reset' | 'released';

/**
 * An allowed attempt whose outcome is recorded once, whichever of failed / succeeded / released is
 * called first (shared by the in-memory and Redis throttles). Only the first key (the account) is
 * cleared by a success; the others just release theirs.
 */
export function allowedAttempt(
  successClearsFirstKey: boolean,
  record: (outcomeFor: (index: number) => SettleOutcome) => void,
): ThrottleResult {
  let settled = false;
  const settle = (outcomeFor: (index: number) => SettleOutcome): void => {
    if (settled) return;
    settled = true;
    record(outcomeFor);
  };
  return {
    allowed: true,
    attempt: {
      failed: () => settle(() => 'failed'),
      succeeded: () => settle((i) => (!successClearsFirstKey ? 'failed' : i === 0 ? 'reset' : 'released')),
      released: () => settle(() => 'released'),
    },
  };
}
