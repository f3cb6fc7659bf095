/**
 * @module Finished responses of the cacheable operations (years, ZIPs, issuers, plan detail), kept per
 * canonical request and bounded in bytes.
 *
 * Entries are keyed by the canonical request (the validated parameters, as in the ETag), so spellings
 * that mean the same request — unknown parameters, aliases, `year=02025` — share one entry: a client
 * sending `?u=1`, `?u=2`, … cannot grow the cache (that took RSS from 275 to 511 MB before). To skip
 * parsing on repeat requests, each entry also answers up to {@link MAX_SPELLINGS} raw request texts
 * seen for it; further spellings are still served, through validation and the canonical key. All bytes
 * (bodies, headers, keys, a per-entry overhead) count toward one budget; the oldest entries go first
 * when it is exceeded (or, with `lru`, the least recently used: search pages, whose requests are many
 * and skewed). Within a build the data are immutable, so an entry is never stale.
 */
import { InvariantError } from '../invariant.ts';

/** What an entry must report about its own size. */
export interface Sized {
  readonly bytes: number;
}

/** Raw request texts remembered per entry. */
export const MAX_SPELLINGS = 4;

/** Map slots, the entry object and its spelling array: an estimate of V8's per-entry overhead. */
const ENTRY_OVERHEAD = 256;

interface Slot<V> {
  readonly key: string;
  readonly value: V;
  readonly spellings: string[];
  bytes: number;
}

export class ResponseCache<V extends Sized> {
  readonly #maxBytes: number;
  readonly #lru: boolean;
  readonly #byKey = new Map<string, Slot<V>>();
  readonly #bySpelling = new Map<string, Slot<V>>();
  #bytes = 0;

  /** `lru`: a hit makes its entry the newest (a Map delete and set, ~0.1 µs); otherwise oldest first. */
  constructor(maxBytes: number, options: { readonly lru?: boolean } = {}) {
    if (!(maxBytes >= 0)) throw new InvariantError(`maxBytes must be >= 0, got ${maxBytes}`);
    this.#maxBytes = maxBytes;
    this.#lru = options.lru === true;
  }

  /** Whether anything can be kept at all (a budget of 0 turns the cache off). */
  get enabled(): boolean {
    return this.#maxBytes > 0;
  }

  /** The entry a raw request text was already seen for. */
  bySpelling(spelling: string): V | undefined {
    const slot = this.#bySpelling.get(spelling);
    if (slot === undefined) return undefined;
    this.#touch(slot);
    return slot.value;
  }

  /** The entry of a canonical request; remembers `spelling` for it while it has room. */
  get(key: string, spelling: string): V | undefined {
    const slot = this.#byKey.get(key);
    if (slot === undefined) return undefined;
    this.#touch(slot);
    this.#remember(slot, spelling);
    return slot.value;
  }

  #touch(slot: Slot<V>): void {
    if (!this.#lru) return;
    this.#byKey.delete(slot.key);
    this.#byKey.set(slot.key, slot);
  }

  set(key: string, spelling: string, value: V): void {
    const old = this.#byKey.get(key);
    if (old !== undefined) this.#evict(old);
    const slot: Slot<V> = { key, value, spellings: [], bytes: value.bytes + 2 * key.length + ENTRY_OVERHEAD };
    if (slot.bytes > this.#maxBytes) return;
    this.#byKey.set(key, slot);
    this.#bytes += slot.bytes;
    this.#remember(slot, spelling);
    this.#trim();
  }

  /** Bytes accounted for (for tests and metrics). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Entries (canonical requests) held. */
  get size(): number {
    return this.#byKey.size;
  }

  clear(): void {
    this.#byKey.clear();
    this.#bySpelling.clear();
    this.#bytes = 0;
  }

  #remember(slot: Slot<V>, spelling: string): void {
    if (slot.spellings.length >= MAX_SPELLINGS || this.#bySpelling.has(spelling)) return;
    slot.spellings.push(spelling);
    this.#bySpelling.set(spelling, slot);
    const added = 2 * spelling.length + 64;
    slot.bytes += added;
    this.#bytes += added;
    this.#trim();
  }

  #evict(slot: Slot<V>): void {
    this.#byKey.delete(slot.key);
    for (const s of slot.spellings) this.#bySpelling.delete(s);
    this.#bytes -= slot.bytes;
  }

  /** Oldest first: a Map iterates in insertion order. */
  #trim(): void {
    if (this.#bytes <= this.#maxBytes) return;
    for (const slot of this.#byKey.values()) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#evict(slot);
    }
  }
}
