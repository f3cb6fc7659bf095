/**
 * @module Reads V8's `--trace-gc-nvp` lines of a server (one line per GC of any of its isolates, main
 * thread and workers alike) into what a load run allocated and collected: `allocated=` is the bytes an
 * isolate allocated since its previous GC, so their sum over a run, divided by the requests it served,
 * is the bytes allocated per request (to within one young generation per isolate: runs must span many
 * GCs, which full-load runs do).
 */

export interface GcEvent {
  /** `[pid:0xaddr]`: which isolate (thread) collected; '' when its prefix went to another line. */
  readonly isolate: string;
  /** `s` scavenge, `mc` mark-compact, `mmc` minor mark-compact, `ms` mark-sweep… */
  readonly kind: string;
  readonly pauseMs: number;
  readonly allocated: number;
}

const BODY = /\bpause=([\d.]+).*?\bgc=(\w+).*?\ballocated=(\d+)/;
const PREFIX = /\[\d+:0x[0-9a-f]+\]/g;

/**
 * One trace line, or null for any other line. V8 writes a line's `[pid:0xaddr]` prefix and its body in
 * two writes, so when threads collect at once a body can follow another thread's prefix or stand on a
 * line of its own: the body is what counts, its isolate is the last prefix before it ('' when none).
 */
export function parseGcLine(line: string): GcEvent | null {
  const m = BODY.exec(line);
  if (m === null) return null;
  let isolate = '';
  for (const p of line.slice(0, m.index).matchAll(PREFIX)) isolate = p[0];
  return { isolate, pauseMs: Number(m[1]), kind: m[2]!, allocated: Number(m[3]) };
}

export interface GcSummary {
  readonly bytes: number;
  readonly scavenges: number;
  readonly markCompacts: number;
  /** GCs of any other kind (minor mark-compact, mark-sweep…). */
  readonly others: number;
  readonly maxPauseMs: number;
  readonly isolates: number;
}

export function summarizeGc(events: readonly GcEvent[]): GcSummary {
  let bytes = 0;
  let scavenges = 0;
  let markCompacts = 0;
  let others = 0;
  let maxPauseMs = 0;
  const isolates = new Set<string>();
  for (const e of events) {
    bytes += e.allocated;
    if (e.kind === 's') scavenges++;
    else if (e.kind === 'mc') markCompacts++;
    else others++;
    maxPauseMs = Math.max(maxPauseMs, e.pauseMs);
    if (e.isolate !== '') isolates.add(e.isolate);
  }
  return { bytes, scavenges, markCompacts, others, maxPauseMs, isolates: isolates.size };
}

/** Collects a server's GC events; `since()` marks a point, `summary(mark)` sums what came after it. */
export class GcTrace {
  readonly #events: GcEvent[] = [];

  /** The line handler to give spawnServer's `onStdoutLine`. */
  readonly onLine = (line: string): void => {
    const e = parseGcLine(line);
    if (e !== null) this.#events.push(e);
  };

  mark(): number {
    return this.#events.length;
  }

  summary(from: number, to = this.#events.length): GcSummary {
    return summarizeGc(this.#events.slice(from, to));
  }
}
