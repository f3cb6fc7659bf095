/**
 * @module The records a request reuses instead of allocating, and who holds them.
 *
 * A request allocates next to nothing because its rows, page model, estimate, parsed query and
 * response buffers are records made once per thread and rewritten by every request. That is only safe
 * while one request at a time uses them and nothing reads them after it is answered. So they all live
 * in one {@link RequestScratch} per thread, which a request borrows for exactly the code that answers
 * it and returns in a `finally`:
 *
 *     const s = scratch.borrow();
 *     try { … execute, write … } finally { s.release(); }
 *
 * and which is passed down explicitly (execute → handler → page model → writer). A borrow while it is
 * borrowed, a part taken outside a borrow, a second answer in one borrow, and a page model read after
 * its borrow ended all throw an `InvariantError`, so a misuse fails in the tests that exercise it
 * instead of letting one request's answer silently become another's.
 *
 * Each module that needs reused records declares them as a {@link ScratchPart}; the scratch makes one
 * of each on first use. This module knows no part, so any layer can declare one. A buffer that one
 * function fills and consumes before it returns (a writer's header block, fast-hash's digest) is not
 * request state and stays private to its module: nothing can read it later.
 */
import { InvariantError } from '../invariant.ts';

/** A kind of reused record: made once per scratch by `make`, found by its index. */
export interface ScratchPart<T> {
  readonly index: number;
  readonly name: string;
  readonly make: () => T;
}

let parts = 0;

/** Declares a part (at module level: one index for the life of the process). */
export function scratchPart<T>(name: string, make: () => T): ScratchPart<T> {
  return { index: parts++, name, make };
}

export class RequestScratch {
  /** Odd while borrowed; every borrow and release moves it on, so a lease number is never reused. */
  #lease = 0;
  readonly #parts: unknown[] = [];
  /** The lease whose request has been answered ({@link claimAnswer}). */
  #answered = -1;

  /** Takes the scratch for one request. Throws when it is already taken. */
  borrow(): this {
    if ((this.#lease & 1) === 1) throw new InvariantError('the request scratch was borrowed while a request still held it');
    this.#lease++;
    return this;
  }

  /** Returns the scratch; everything read from it is invalid from now on. */
  release(): void {
    if ((this.#lease & 1) === 0) throw new InvariantError('the request scratch was released without being borrowed');
    this.#lease++;
  }

  get borrowed(): boolean {
    return (this.#lease & 1) === 1;
  }

  /** The current borrowing's number, recorded by what is valid only within it (see {@link check}). */
  get lease(): number {
    return this.#lease;
  }

  /** This scratch's record of `part`; only while borrowed. */
  part<T>(part: ScratchPart<T>): T {
    if ((this.#lease & 1) === 0) throw new InvariantError(`the request scratch's ${part.name} was taken outside a borrow`);
    let record = this.#parts[part.index] as T | undefined;
    if (record === undefined) this.#parts[part.index] = record = part.make();
    return record;
  }

  /** Throws unless `lease` is the borrowing in progress: `what` was made by a request that is over. */
  check(lease: number, what: string): void {
    if (lease !== this.#lease || (lease & 1) === 0)
      throw new InvariantError(`${what} was read after the request that made it returned the scratch`);
  }

  /**
   * Marks the borrowing's request as answered. One borrowing answers one request: a second answer would
   * overwrite the first's records while the caller still holds it.
   */
  claimAnswer(): void {
    if ((this.#lease & 1) === 0) throw new InvariantError('a request was answered outside a borrow of the request scratch');
    if (this.#answered === this.#lease) throw new InvariantError('two requests were answered in one borrow of the request scratch');
    this.#answered = this.#lease;
  }
}

let thread: RequestScratch | undefined;

/**
 * The scratch of the calling thread. Each front takes it once and passes it down; the REST front and
 * MCP share it on the main thread, which is safe because every borrowing is synchronous.
 */
export function threadScratch(): RequestScratch {
  return (thread ??= new RequestScratch());
}
