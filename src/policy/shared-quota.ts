/**
 * @module The daily quota shared by every thread of the process (REST worker threads and the main
 * thread's MCP server): the same rules as DailyQuota (src/policy/quota.ts) — one counter per user and
 * UTC day, refused requests not counted, the tier's limit looked up on each call — over counters in
 * SharedArrayBuffers (src/policy/shared-counters.ts), so a user's successes over all threads never
 * exceed the limit and no request is refused below it.
 *
 * One thread owns it (`open`): it loads today's counts from the state store at start and saves the
 * changed ones `flushDelayMs` after a count (25 ms, as DailyQuota: a crash loses at most that much
 * counting). Other threads `attach` to its descriptor and only count. The first count after a save
 * wakes the owner through a shared flag (Atomics.waitAsync), so the owner thread of an idle server
 * does not wake at all.
 *
 * A user id longer than MAX_ID_BYTES, or a day with more distinct users than the table holds (65,536 by
 * default), is counted per thread instead, exactly within the thread but not across threads and not
 * saved; one line says so. Around 00:00 UTC a request racing the first one of the new day may be counted
 * on either day.
 */
import { CounterTable, type CounterTableBuffers } from './shared-counters.ts';
import { DAY_MS, DEFAULT_FLUSH_DELAY_MS, defaultOnFlushError, quotaDecision, type Quota, type QuotaDecision } from './quota.ts';
import type { StateStore } from './state-store.ts';
import { TIERS, type Tier } from './tiers.ts';
import { InvariantError } from '../invariant.ts';

/** What a worker needs to count in the owner's tables; cloned by postMessage, buffers shared. */
export interface SharedQuotaDescriptor {
  readonly kind: 'hpd-shared-quota';
  readonly tables: readonly [CounterTableBuffers, CounterTableBuffers];
  /** One Int32: 1 once something was counted since the owner's last save began, else 0. */
  readonly signal: SharedArrayBuffer;
  readonly limits: Readonly<Record<Tier, number>>;
}

export interface SharedQuotaOptions {
  readonly capacity?: number;
  readonly flushDelayMs?: number;
  readonly onFlushError?: (err: unknown) => void;
  readonly log?: (line: string) => void;
}

/** The owner's record of one table: the day it held, each slot's count as saved (-1: none), ids read. */
interface SavedTable {
  day: number;
  readonly counts: Int32Array;
  readonly ids: Array<string | undefined>;
}

const dayName = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

export class SharedDailyQuota implements Quota {
  readonly #tables: readonly [CounterTable, CounterTable];
  /** The shared "counted since the last save" flag (see the module note). */
  readonly #signal: Int32Array;
  readonly #limits: Readonly<Record<Tier, number>>;

  get limits(): Readonly<Record<Tier, number>> {
    return this.#limits;
  }
  readonly #clock: () => number;
  readonly #log: (line: string) => void;
  /** The owner's store; null in attached threads. */
  readonly #store: StateStore | null;
  readonly #flushDelayMs: number;
  readonly #onFlushError: (err: unknown) => void;
  /** This thread's slot lookups for the day it last counted (ids are re-read only once a day). */
  #slotDay = Number.NaN;
  #slots = new Map<string, number>();
  /** Users counted in this thread only (see the module note), per day. */
  #local = new Map<string, number>();
  #warned = false;
  /** The owner's record of what it saved from each table (by table index); empty in attached threads. */
  readonly #saved: SavedTable[] = [];
  /** The owner's pending save, armed by a count; undefined while it waits for one or saves. */
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(
    tables: readonly [CounterTable, CounterTable],
    signal: Int32Array,
    limits: Readonly<Record<Tier, number>>,
    clock: () => number,
    store: StateStore | null,
    options: SharedQuotaOptions,
  ) {
    this.#tables = tables;
    this.#signal = signal;
    this.#limits = limits;
    this.#clock = clock;
    this.#store = store;
    this.#log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.#flushDelayMs = options.flushDelayMs ?? DEFAULT_FLUSH_DELAY_MS;
    this.#onFlushError = options.onFlushError ?? defaultOnFlushError;
  }

  /** The owner: creates the tables, loads today's counts, saves changes `flushDelayMs` after a count. */
  static open(
    store: StateStore,
    limits: Readonly<Record<Tier, number>>,
    clock: () => number = Date.now,
    options: SharedQuotaOptions = {},
  ): SharedDailyQuota {
    const tables = [CounterTable.create(options.capacity), CounterTable.create(options.capacity)] as const;
    const q = new SharedDailyQuota(tables, new Int32Array(new SharedArrayBuffer(4)), limits, clock, store, options);
    const today = Math.floor(clock() / DAY_MS);
    const table = q.#table(today);
    const saved = q.#savedOf(today & 1, today);
    for (const [userId, count] of store.loadCounters(dayName(today))) {
      const slot = table.slotOf(userId, true);
      if (slot < 0) continue;
      table.setCount(slot, count);
      saved.counts[slot] = count;
    }
    q.#awaitCount();
    return q;
  }

  /**
   * The owner's save cycle: sleep until a thread counts, save `flushDelayMs` later, then sleep again.
   * One save at a time: a stalled store holds the cycle, it queues nothing behind the stalled save. The
   * wait keeps no process alive, nor does the timer (unref'd: close() saves what is left).
   */
  #awaitCount(): void {
    if (this.#closed) return;
    const wait = Atomics.waitAsync(this.#signal, 0, 0);
    if (wait.async) void wait.value.then(() => this.#armSave());
    else this.#armSave();
  }

  #armSave(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // Cleared before the counts are read: a count made during the save sets it again.
      Atomics.store(this.#signal, 0, 0);
      this.flush()
        .catch(this.#onFlushError)
        .finally(() => this.#awaitCount());
    }, this.#flushDelayMs);
    this.#timer.unref();
  }

  /** Another thread counting in the owner's tables; it saves nothing. */
  static attach(descriptor: SharedQuotaDescriptor, clock: () => number = Date.now, options: SharedQuotaOptions = {}): SharedDailyQuota {
    const tables = [CounterTable.attach(descriptor.tables[0]), CounterTable.attach(descriptor.tables[1])] as const;
    return new SharedDailyQuota(tables, new Int32Array(descriptor.signal), descriptor.limits, clock, null, options);
  }

  descriptor(): SharedQuotaDescriptor {
    return {
      kind: 'hpd-shared-quota',
      tables: [this.#tables[0].buffers, this.#tables[1].buffers],
      signal: this.#signal.buffer as SharedArrayBuffer,
      limits: this.#limits,
    };
  }

  consume(userId: string, tier: Tier): QuotaDecision {
    if (this.#closed) throw new InvariantError('SharedDailyQuota is closed');
    const now = this.#clock();
    const day = Math.floor(now / DAY_MS);
    const limit = this.#limits[tier];
    const slot = this.#slotFor(userId, day);
    if (slot === -1) return this.#consumeLocally(userId, limit, now, day);
    const after = this.#table(day).tryAdd(slot, limit);
    // One load per request; the store and the wake-up only for the first count after a save.
    if (after > 0 && Atomics.load(this.#signal, 0) === 0 && Atomics.compareExchange(this.#signal, 0, 0, 1) === 0)
      Atomics.notify(this.#signal, 0);
    return after > 0 ? decision(true, limit, after, now, day) : decision(false, limit, -after, now, day);
  }

  peek(userId: string, tier: Tier): QuotaDecision {
    const now = this.#clock();
    const day = Math.floor(now / DAY_MS);
    const limit = this.#limits[tier];
    const table = this.#table(day);
    const slot = table.slotOf(userId, false);
    const used = slot === -1 ? (this.#local.get(userId) ?? 0) : table.count(slot);
    return decision(used < limit, limit, used, now, day);
  }

  /**
   * The owner saves every count changed since its last save; other threads have nothing to save. A
   * flush compares counts slot by slot and reads the id only of a count that changed (once a day per
   * slot): under load it runs every 25 ms or so, and reading every id of the day on each run would cost
   * the main thread 5 ms per run with 10,000 users and more than the 25 ms with 60,000.
   */
  flush(): Promise<void> {
    const store = this.#store;
    if (store === null) return Promise.resolve();
    const run = this.#chain.then(async () => {
      for (let t = 0; t < this.#tables.length; t++) {
        const table = this.#tables[t]!;
        const day = table.day;
        if (day < 0) continue;
        const saved = this.#savedOf(t, day);
        const slots: number[] = [];
        table.changedSince(saved.counts, slots);
        // A table is cleared only for a day two after the one it held, whose counts were saved by then.
        if (slots.length === 0 || table.day !== day) continue;
        const changed = new Map<string, number>();
        for (let i = 0; i < slots.length; i += 2) changed.set((saved.ids[slots[i]!] ??= table.idOf(slots[i]!)), slots[i + 1]!);
        await store.saveCounters(dayName(day), changed);
        // Flushes run one after another (the chain), so nothing moved `saved` to another day meanwhile.
        for (let i = 0; i < slots.length; i += 2) saved.counts[slots[i]!] = slots[i + 1]!;
      }
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** What the owner saved of table `index` for `day`, forgotten when the table moves to another day. */
  #savedOf(index: number, day: number): SavedTable {
    let saved = this.#saved[index];
    if (saved === undefined) {
      const capacity = this.#tables[index]!.capacity;
      saved = this.#saved[index] = { day, counts: new Int32Array(capacity).fill(-1), ids: new Array<string | undefined>(capacity) };
    } else if (saved.day !== day) {
      saved.day = day;
      saved.counts.fill(-1);
      saved.ids.fill(undefined);
    }
    return saved;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    // Ends a pending wait (its promise would otherwise stay pending with this quota in its closure).
    Atomics.notify(this.#signal, 0);
    await this.flush();
  }

  /** The table of `day`, made to hold it (the first thread to see a new day clears it). */
  #table(day: number): CounterTable {
    const table = this.#tables[day & 1];
    table.ensureDay(day);
    return table;
  }

  #slotFor(userId: string, day: number): number {
    if (day !== this.#slotDay) {
      this.#slotDay = day;
      this.#slots.clear();
      this.#local.clear();
    }
    let slot = this.#slots.get(userId);
    if (slot === undefined) {
      slot = this.#table(day).slotOf(userId, true);
      if (slot === -1) {
        if (!this.#warned) {
          this.#warned = true;
          this.#log(
            `hpd: quota: a user id over the shared table's limits (${userId.length} chars, or more than ${this.#tables[0].capacity} users today): counted in this thread only`,
          );
        }
        return -1;
      }
      this.#slots.set(userId, slot);
    } else {
      this.#table(day);
    }
    return slot;
  }

  #consumeLocally(userId: string, limit: number, now: number, day: number): QuotaDecision {
    const used = this.#local.get(userId) ?? 0;
    if (used >= limit) return decision(false, limit, used, now, day);
    this.#local.set(userId, used + 1);
    return decision(true, limit, used + 1, now, day);
  }
}

function decision(allowed: boolean, limit: number, used: number, now: number, day: number): QuotaDecision {
  return quotaDecision(allowed, limit, used, now, (day + 1) * DAY_MS);
}

/** A worker's quota from the descriptor it was started with (checked: it crossed a thread boundary). */
export function attachSharedQuota(descriptor: unknown, clock?: () => number): SharedDailyQuota {
  const d = descriptor as Partial<SharedQuotaDescriptor> | null;
  if (
    d?.kind !== 'hpd-shared-quota' ||
    !Array.isArray(d.tables) ||
    d.tables.length !== 2 ||
    !(d.signal instanceof SharedArrayBuffer) ||
    d.signal.byteLength !== 4 ||
    typeof d.limits !== 'object'
  )
    throw new InvariantError('not a shared quota descriptor');
  for (const t of TIERS) if (typeof d.limits?.[t] !== 'number') throw new InvariantError(`shared quota descriptor without a ${t} limit`);
  return SharedDailyQuota.attach(d as SharedQuotaDescriptor, clock);
}
