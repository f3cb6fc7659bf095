/**
 * @module The daily request quota (docs/compatibility.md#daily-counter): one counter per user id and UTC day, shared by all
 * of the user's API keys and OAuth tokens and by the REST and MCP fronts, so rotating credentials or
 * switching front never resets it. Create ONE DailyQuota per process and hand it to both fronts.
 *
 * Counting happens in memory, synchronously, on the request path; the store is written in the
 * background at most `flushDelayMs` (25 ms) after a change, one write transaction per flush with one
 * put per user whose count changed, committed off the main thread (lmdb-js async transactions), so a
 * request never waits for a disk write. A process crash (SIGKILL) loses the counts of at most the last
 * flush delay plus one commit: measured ≤ 100 ms of traffic (test/cli/serve-quota-crash.test.ts). A
 * commit survives the process once LMDB has written it to the OS page cache; only an OS crash can
 * lose more. The timer runs only while there are unsaved changes and is `unref()`ed so it never keeps
 * a process alive; a clean shutdown calls `close()` for the final write. Counters are reloaded from the store at start, so a restart
 * does not hand out a fresh allowance.
 *
 * The window is the calendar day in UTC: counts reset at 00:00 UTC, when `RateLimit-Reset` points.
 * The limit is looked up from the tier given on each call (the user's current tier), so an upgrade
 * during the day raises the allowance at once and keeps the requests already counted.
 */
import type { StateStore } from './state-store.ts';
import type { Tier } from './tiers.ts';
import { InvariantError } from '../invariant.ts';

export interface QuotaDecision {
  /** Whether this request may proceed (for peek: whether the next one could). */
  allowed: boolean;
  /** Requests per day for the tier. */
  limit: number;
  /** Requests left today after this one; 0 when refused. */
  remaining: number;
  /** Unix time (seconds) of the next 00:00 UTC, when the counter resets. */
  resetEpochSeconds: number;
  /** Whole seconds until that reset, rounded up (never 0), for `Retry-After`. */
  retryAfterSeconds: number;
}

/**
 * What the fronts count requests against: this module's DailyQuota (one thread), SharedDailyQuota
 * (src/policy/shared-quota.ts: every thread of the process, for REST worker threads) or LeasedQuota
 * (src/policy/leased-quota.ts: every instance sharing a Redis).
 */
export interface Quota {
  /**
   * Counts one request. Synchronous whenever the answer is known locally; a promise only when it is
   * not (a LeasedQuota that must lease more allowance from Redis first), which the fronts await.
   */
  consume(userId: string, tier: Tier): QuotaDecision | Promise<QuotaDecision>;
  /** Requests per UTC day for each tier, as configured (the plans page shows them). */
  readonly limits: Readonly<Record<Tier, number>>;
  peek(userId: string, tier: Tier): QuotaDecision;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface DailyQuotaOptions {
  /** Longest time a change stays unsaved; default DEFAULT_FLUSH_DELAY_MS. */
  flushDelayMs?: number;
  /** Called when a background save fails (the counts are kept and retried); default: a process warning. */
  onFlushError?: (err: unknown) => void;
}

/**
 * Bounds the counts a crash can lose; at ~30k req/s a flush writes a few hundred users at most. The
 * loss is this delay plus the commit in flight: at 50 ms a SIGKILL under load lost 103 ms of counts once
 * in the suite (the promise is 100 ms), so the delay is 25 ms.
 */
export const DEFAULT_FLUSH_DELAY_MS = 25;

export const DAY_MS = 86_400_000;

/** What a quota reports for one request: shared by DailyQuota and SharedDailyQuota. */
export function quotaDecision(allowed: boolean, limit: number, used: number, now: number, dayEndMs: number): QuotaDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - used),
    resetEpochSeconds: dayEndMs / 1000,
    retryAfterSeconds: Math.ceil((dayEndMs - now) / 1000),
  };
}

export function defaultOnFlushError(err: unknown): void {
  process.emitWarning(
    `could not save quota counters (will retry): ${err instanceof Error ? err.message : String(err)}`,
    'HpdPolicyWarning',
  );
}

export class DailyQuota implements Quota {
  readonly #store: StateStore;
  readonly #limits: Readonly<Record<Tier, number>>;

  get limits(): Readonly<Record<Tier, number>> {
    return this.#limits;
  }
  readonly #clock: () => number;
  readonly #flushDelayMs: number;
  readonly #onFlushError: (err: unknown) => void;
  /** The current UTC day: [start, end) in ms and its 'YYYY-MM-DD' name. */
  #dayStartMs = 0;
  #dayEndMs = 0;
  #day = '';
  #counts = new Map<string, number>();
  /** Changes not yet written: day → user → count. Keyed by day so a save straddling midnight is right. */
  #unsaved = new Map<string, Map<string, number>>();
  #timer: NodeJS.Timeout | undefined;
  /** Saves run one after another so an older count can never overwrite a newer one. */
  #chain: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(store: StateStore, limits: Readonly<Record<Tier, number>>, clock: () => number, options: DailyQuotaOptions) {
    this.#store = store;
    this.#limits = limits;
    this.#clock = clock;
    this.#flushDelayMs = options.flushDelayMs ?? DEFAULT_FLUSH_DELAY_MS;
    this.#onFlushError = options.onFlushError ?? defaultOnFlushError;
    if (!(this.#flushDelayMs >= 0)) throw new InvariantError(`flushDelayMs must be >= 0, got ${this.#flushDelayMs}`);
  }

  /**
   * Loads today's counters from the store and starts counting.
   *
   * @param clock milliseconds since the epoch; injectable so tests can cross midnight
   * @example const quota = DailyQuota.open(store, serveConfig().limits, Date.now);
   */
  static open(
    store: StateStore,
    limits: Readonly<Record<Tier, number>>,
    clock: () => number = Date.now,
    options: DailyQuotaOptions = {},
  ): DailyQuota {
    const quota = new DailyQuota(store, limits, clock, options);
    quota.#roll(clock());
    return quota;
  }

  /**
   * Counts one request for `userId` if the tier's allowance is not used up. A refused request is not
   * counted, so a client hammering after exhaustion does not dig itself deeper.
   *
   * @example
   * const d = quota.consume(auth.userId, auth.tier);
   * if (!d.allowed) return tooManyRequests(rateLimitHeaders(d));
   */
  consume(userId: string, tier: Tier): QuotaDecision {
    if (this.#closed) throw new InvariantError('DailyQuota is closed');
    const now = this.#clock();
    this.#roll(now);
    const limit = this.#limits[tier];
    const used = this.#counts.get(userId) ?? 0;
    if (used >= limit) return this.#decision(false, limit, used, now);
    const count = used + 1;
    this.#counts.set(userId, count);
    this.#markUnsaved(userId, count);
    return this.#decision(true, limit, count, now);
  }

  /** The state as consume would report it, without counting (for responses that do not count). */
  peek(userId: string, tier: Tier): QuotaDecision {
    const now = this.#clock();
    this.#roll(now);
    const limit = this.#limits[tier];
    const used = this.#counts.get(userId) ?? 0;
    return this.#decision(used < limit, limit, used, now);
  }

  /** Writes every unsaved change; resolves when they are committed (rejects if the store fails). */
  flush(): Promise<void> {
    this.#cancelTimer();
    const run = this.#chain.then(() => this.#saveUnsaved());
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** Final flush; afterwards consume throws. Does not close the store, which the caller owns. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  #decision(allowed: boolean, limit: number, used: number, now: number): QuotaDecision {
    return quotaDecision(allowed, limit, used, now, this.#dayEndMs);
  }

  /** Switches to the UTC day containing `now` when it is not the current one (midnight, or a clock jump). */
  #roll(now: number): void {
    if (now >= this.#dayStartMs && now < this.#dayEndMs) return;
    this.#dayStartMs = Math.floor(now / DAY_MS) * DAY_MS;
    this.#dayEndMs = this.#dayStartMs + DAY_MS;
    this.#day = new Date(this.#dayStartMs).toISOString().slice(0, 10);
    // Usually empty at midnight; not empty after a backwards clock jump or a restart.
    this.#counts = this.#store.loadCounters(this.#day);
    const pending = this.#unsaved.get(this.#day);
    if (pending !== undefined) for (const [userId, count] of pending) this.#counts.set(userId, count);
  }

  #markUnsaved(userId: string, count: number): void {
    let day = this.#unsaved.get(this.#day);
    if (day === undefined) this.#unsaved.set(this.#day, (day = new Map()));
    day.set(userId, count);
    // Checked here, not only in #schedule: the call itself cost ~90 bytes of garbage per request (heap sampler).
    if (this.#timer === undefined) this.#schedule();
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch(this.#onFlushError);
    }, this.#flushDelayMs);
    this.#timer.unref();
  }

  #cancelTimer(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #saveUnsaved(): Promise<void> {
    const batch = this.#unsaved;
    if (batch.size === 0) return;
    this.#unsaved = new Map();
    try {
      for (const [day, entries] of batch) await this.#store.saveCounters(day, entries);
    } catch (err) {
      // Put back what no newer change has superseded and retry later; saves are idempotent overwrites.
      for (const [day, entries] of batch) {
        let current = this.#unsaved.get(day);
        if (current === undefined) this.#unsaved.set(day, (current = new Map()));
        for (const [userId, count] of entries) if (!current.has(userId)) current.set(userId, count);
      }
      this.#schedule();
      throw err;
    }
  }
}
