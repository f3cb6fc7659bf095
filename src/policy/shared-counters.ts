/**
 * @module Per-user counters of one UTC day in a SharedArrayBuffer, counted by every thread of the
 * process with Atomics: the daily quota stays exact when REST runs in several worker threads.
 *
 * Layout (one table per day parity, so yesterday's counts stay readable while today's fill):
 *   header  Int32[4]: day number the table holds (or CLEARING / NEVER), slots claimed, capacity
 *   slots   Int32[capacity × 3]: state (empty / claiming / ready), count, id length in bytes
 *   ids     Uint8[capacity × MAX_ID_BYTES]: each slot's user id (UTF-8), so the owner thread can save
 *           counts by id and lookups compare ids exactly (no hash collision can merge two users)
 *   order   Int32[capacity]: slot indexes in claim order, so saving walks only the users seen today
 *
 * Exactness: a request does `old = Atomics.add(count, 1)` and succeeds iff `old < limit`, else undoes
 * its add. The first `limit` adds on a slot see 0 … limit−1 and all succeed, so there are never more
 * than `limit` successes; an add sees `old ≥ limit` only after `limit` earlier adds, each of which
 * either succeeded (old < limit) or itself saw ≥ limit earlier adds — by induction `limit` successes
 * already happened, so no request is refused below the limit.
 */
import { InvariantError } from '../invariant.ts';

export const MAX_ID_BYTES = 128;
export const DEFAULT_CAPACITY = 1 << 16;

const DAY = 0;
const USED = 1;
const HEADER_INTS = 4;
/** Header DAY values that are not days. */
const NEVER = -1;
const CLEARING = -2;

const SLOT_INTS = 3;
const STATE = 0;
const COUNT = 1;
const ID_LENGTH = 2;
const EMPTY = 0;
const CLAIMING = 1;
const READY = 2;

/** The buffers of one table: structured-cloneable, shared (not copied) by postMessage. */
export interface CounterTableBuffers {
  readonly header: SharedArrayBuffer;
  readonly slots: SharedArrayBuffer;
  readonly ids: SharedArrayBuffer;
  readonly order: SharedArrayBuffer;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class CounterTable {
  readonly buffers: CounterTableBuffers;
  readonly capacity: number;
  readonly #header: Int32Array;
  readonly #slots: Int32Array;
  readonly #ids: Uint8Array;
  readonly #order: Int32Array;

  private constructor(buffers: CounterTableBuffers) {
    this.buffers = buffers;
    this.#header = new Int32Array(buffers.header);
    this.#slots = new Int32Array(buffers.slots);
    this.#ids = new Uint8Array(buffers.ids);
    this.#order = new Int32Array(buffers.order);
    this.capacity = this.#order.length;
  }

  static create(capacity: number = DEFAULT_CAPACITY): CounterTable {
    if (!Number.isSafeInteger(capacity) || capacity < 2 || (capacity & (capacity - 1)) !== 0)
      throw new InvariantError(`capacity must be a power of two ≥ 2, got ${capacity}`);
    const t = new CounterTable({
      header: new SharedArrayBuffer(HEADER_INTS * 4),
      slots: new SharedArrayBuffer(capacity * SLOT_INTS * 4),
      ids: new SharedArrayBuffer(capacity * MAX_ID_BYTES),
      order: new SharedArrayBuffer(capacity * 4),
    });
    Atomics.store(t.#header, DAY, NEVER);
    return t;
  }

  static attach(buffers: CounterTableBuffers): CounterTable {
    return new CounterTable(buffers);
  }

  /** The day this table holds now (NEVER before first use). */
  get day(): number {
    return Atomics.load(this.#header, DAY);
  }

  /**
   * Makes the table hold `day`, clearing it if it held an older one. The first thread to see the new
   * day clears it; any other waits for that (a fill of a few MB: well under a millisecond). Returns
   * false when the table already holds a later day (this thread's clock is behind).
   */
  ensureDay(day: number): boolean {
    for (;;) {
      const d = Atomics.load(this.#header, DAY);
      if (d === day) return true;
      if (d > day) return false;
      if (d === CLEARING) continue;
      if (Atomics.compareExchange(this.#header, DAY, d, CLEARING) !== d) continue;
      this.#slots.fill(0);
      this.#order.fill(0);
      Atomics.store(this.#header, USED, 0);
      Atomics.store(this.#header, DAY, day);
      return true;
    }
  }

  /** The slot of `userId`, claimed if `create`; -1 if absent, if the table is full, or the id too long. */
  slotOf(userId: string, create: boolean): number {
    const bytes = encoder.encode(userId);
    if (bytes.length > MAX_ID_BYTES) return -1;
    const mask = this.capacity - 1;
    let i = fnv1a(bytes) & mask;
    for (let probes = 0; probes < this.capacity; probes++, i = (i + 1) & mask) {
      const base = i * SLOT_INTS;
      let state = Atomics.load(this.#slots, base + STATE);
      if (state === EMPTY) {
        if (!create) return -1;
        if (Atomics.compareExchange(this.#slots, base + STATE, EMPTY, CLAIMING) === EMPTY) {
          this.#ids.set(bytes, i * MAX_ID_BYTES);
          Atomics.store(this.#slots, base + ID_LENGTH, bytes.length);
          Atomics.store(this.#order, Atomics.add(this.#header, USED, 1), i);
          Atomics.store(this.#slots, base + STATE, READY);
          return i;
        }
        state = Atomics.load(this.#slots, base + STATE);
      }
      // Another thread is writing this slot's id: it is done within a few instructions.
      while (state === CLAIMING) state = Atomics.load(this.#slots, base + STATE);
      if (this.#idEquals(i, bytes)) return i;
    }
    return -1;
  }

  /** Counts one use if the slot is below `limit`; returns the count after it, or -(count) when refused. */
  tryAdd(slot: number, limit: number): number {
    const at = slot * SLOT_INTS + COUNT;
    const old = Atomics.add(this.#slots, at, 1);
    if (old < limit) return old + 1;
    Atomics.sub(this.#slots, at, 1);
    return -old;
  }

  count(slot: number): number {
    return Atomics.load(this.#slots, slot * SLOT_INTS + COUNT);
  }

  /** Sets a count loaded from the store (the owner, before any thread counts). */
  setCount(slot: number, count: number): void {
    Atomics.store(this.#slots, slot * SLOT_INTS + COUNT, count);
  }

  /** Every claimed user and its count, in claim order. */
  *entries(): Generator<[string, number]> {
    const used = this.claimed;
    for (let k = 0; k < used; k++) {
      const i = this.claimedSlot(k);
      if (this.isReady(i)) yield [this.idOf(i), this.count(i)];
    }
  }

  /**
   * Appends to `out` the slot and count of every ready slot whose count is not `saved[slot]`. The walk
   * reads order and counts without Atomics (aligned 32-bit reads are not torn; a count read stale is
   * caught by the next walk), so the owner can run it every 25 ms over 65,536 users; the state of a
   * slot that changed is read with Atomics, so its id is complete when it is read.
   */
  changedSince(saved: Int32Array, out: number[]): void {
    const used = this.claimed;
    const order = this.#order;
    const slots = this.#slots;
    for (let k = 0; k < used; k++) {
      const slot = order[k]!;
      const count = slots[slot * SLOT_INTS + COUNT]!;
      if (count !== saved[slot] && this.isReady(slot)) out.push(slot, count);
    }
  }

  /** How many slots have been claimed today; {@link claimedSlot} gives them in claim order. */
  get claimed(): number {
    return Math.min(Atomics.load(this.#header, USED), this.capacity);
  }

  /** The slot claimed `k`-th (`k` < {@link claimed}). */
  claimedSlot(k: number): number {
    return Atomics.load(this.#order, k);
  }

  /** Whether the slot's id is written (a claimed slot is not ready for the few instructions that write it). */
  isReady(slot: number): boolean {
    return Atomics.load(this.#slots, slot * SLOT_INTS + STATE) === READY;
  }

  /** The user id of a ready slot. */
  idOf(slot: number): string {
    const len = Atomics.load(this.#slots, slot * SLOT_INTS + ID_LENGTH);
    // Copied out of the shared bytes: TextDecoder does not read SharedArrayBuffer views.
    return decoder.decode(this.#ids.slice(slot * MAX_ID_BYTES, slot * MAX_ID_BYTES + len));
  }

  #idEquals(slot: number, bytes: Uint8Array): boolean {
    if (Atomics.load(this.#slots, slot * SLOT_INTS + ID_LENGTH) !== bytes.length) return false;
    const base = slot * MAX_ID_BYTES;
    for (let k = 0; k < bytes.length; k++) if (this.#ids[base + k] !== bytes[k]) return false;
    return true;
  }
}

/** FNV-1a over bytes: spreads short, similar ids (`user-1`, `user-2`) over the table. */
function fnv1a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < bytes.length; k++) {
    h ^= bytes[k]!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
