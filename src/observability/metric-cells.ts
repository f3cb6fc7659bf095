/**
 * @module Counters every thread of the process adds to and the main thread reads on a scrape: one
 * SharedArrayBuffer of float64 cells, one row of cells per thread (row 0 the main thread, row i + 1
 * REST worker i).
 *
 * Why rows instead of one shared cell per counter: each row has a single writer, so an increment is a
 * plain `+=` (no Atomics, no cache line bounced between cores on every request), and the reader sums
 * the rows. Float64 because latency sums are fractional; an aligned 8-byte store is not torn on the
 * platforms Node supports, and a scrape that sees an increment one request late is still a valid
 * Prometheus sample. A replacement worker takes over its predecessor's row, so counters never go back.
 */
import { InvariantError } from '../invariant.ts';

/** What crosses to a worker thread (SharedArrayBuffers are shared by postMessage, not copied). */
export interface MetricCellsDescriptor {
  readonly buffer: SharedArrayBuffer;
  readonly cellsPerThread: number;
  readonly threads: number;
}

export class MetricCells {
  readonly descriptor: MetricCellsDescriptor;
  /** This thread's row: the only cells it writes. */
  readonly #row: Float64Array;
  readonly #all: Float64Array;

  private constructor(d: MetricCellsDescriptor, thread: number) {
    if (!Number.isSafeInteger(thread) || thread < 0 || thread >= d.threads)
      throw new InvariantError(`metric row ${thread} outside 0..${d.threads - 1}`);
    this.descriptor = d;
    this.#all = new Float64Array(d.buffer);
    this.#row = new Float64Array(d.buffer, thread * d.cellsPerThread * 8, d.cellsPerThread);
  }

  /** Cells for `threads` rows; this (the creating) thread writes row 0. */
  static create(cellsPerThread: number, threads: number): MetricCells {
    if (!Number.isSafeInteger(cellsPerThread) || cellsPerThread < 1)
      throw new InvariantError(`cellsPerThread must be a positive integer, got ${cellsPerThread}`);
    if (!Number.isSafeInteger(threads) || threads < 1) throw new InvariantError(`threads must be a positive integer, got ${threads}`);
    return new MetricCells({ buffer: new SharedArrayBuffer(cellsPerThread * threads * 8), cellsPerThread, threads }, 0);
  }

  /** The same cells seen from another thread, writing row `thread`. */
  static attach(d: MetricCellsDescriptor, thread: number): MetricCells {
    return new MetricCells(d, thread);
  }

  add(cell: number, n = 1): void {
    this.#row[cell]! += n;
  }

  /** The cell summed over every thread's row. */
  sum(cell: number): number {
    const { threads, cellsPerThread } = this.descriptor;
    let s = 0;
    for (let t = 0; t < threads; t++) s += this.#all[t * cellsPerThread + cell]!;
    return s;
  }
}
