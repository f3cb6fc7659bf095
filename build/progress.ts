/**
 * @module Progress reporting of the data compiler.
 *
 * On a terminal each stage redraws one line (rows, rows/s, ETA from bytes read); elsewhere (CI, pipes)
 * it prints one plain line per finished stage, because carriage-return animations turn logs into noise.
 * Progress always goes to stderr so that `--json` output on stdout stays machine-readable.
 */

export interface StageSummary {
  readonly stage: string;
  readonly rows: number;
  readonly seconds: number;
  readonly rowsPerSecond: number;
}

export interface ProgressSink {
  /** Starts a stage; `total` is in the same unit as the `done` passed to update (bytes or rows). */
  stage(name: string): StageProgress;
  /** One informational line. */
  info(line: string): void;
  /** One line the operator must see (a damaged build being replaced): written even when quiet. */
  warn(line: string): void;
  /** The stage started last and not ended yet, for a failure to name where it happened. */
  current(): string | null;
  readonly summaries: StageSummary[];
}

export interface StageProgress {
  /** `rows` so far; `done`/`total` drive the percentage and ETA when the total is known. */
  update(rows: number, done?: number, total?: number | null): void;
  end(rows: number): StageSummary;
}

const REDRAW_MS = 100;

/** A reporter writing to a stream: animated when `tty`, one line per stage otherwise, silent when `quiet`. */
export function createProgress(opts: { tty: boolean; quiet?: boolean; out?: NodeJS.WritableStream }): ProgressSink {
  const out = opts.out ?? process.stderr;
  const summaries: StageSummary[] = [];
  const write = (s: string): void => {
    if (opts.quiet !== true) out.write(s);
  };
  const open: string[] = [];
  return {
    summaries,
    current: () => open.at(-1) ?? null,
    info(line) {
      write(`${line}\n`);
    },
    warn(line) {
      out.write(`${line}\n`);
    },
    stage(name) {
      open.push(name);
      const started = performance.now();
      let lastDraw = 0;
      let drawn = false;
      return {
        update(rows, done, total) {
          if (!opts.tty) return;
          const now = performance.now();
          if (now - lastDraw < REDRAW_MS) return;
          lastDraw = now;
          drawn = true;
          const secs = (now - started) / 1000;
          const rate = secs > 0 ? rows / secs : 0;
          let bar = '';
          let eta = '';
          if (done !== undefined && total !== undefined && total !== null && total > 0) {
            const frac = Math.min(1, done / total);
            const width = 24;
            const full = Math.round(frac * width);
            bar = ` [${'#'.repeat(full)}${'.'.repeat(width - full)}] ${(frac * 100).toFixed(0).padStart(3)}%`;
            if (frac > 0.01) eta = ` ETA ${Math.max(0, (secs / frac) * (1 - frac)).toFixed(0)} s`;
          }
          write(`\r\u001b[2K${name}${bar} ${fmtInt(rows)} rows ${fmtInt(rate)} rows/s${eta}`);
        },
        end(rows) {
          open.splice(open.lastIndexOf(name), 1);
          const seconds = (performance.now() - started) / 1000;
          const summary: StageSummary = {
            stage: name,
            rows,
            seconds: round3(seconds),
            rowsPerSecond: seconds > 0 ? Math.round(rows / seconds) : rows,
          };
          summaries.push(summary);
          if (drawn) write('\r\u001b[2K');
          write(`${name}: ${fmtInt(rows)} rows in ${seconds.toFixed(2)} s (${fmtInt(summary.rowsPerSecond)} rows/s)\n`);
          return summary;
        },
      };
    },
  };
}

function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
