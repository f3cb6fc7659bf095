/**
 * @module Process CPU time per task (user + system, the inflate threads included), beside tinybench's
 * wall time: the benchmark machine is shared, and waiting for a core is counted by the wall clock but not
 * here.
 */
export interface CpuTimer {
  /** Wraps a task so each run adds its CPU time under `name`. */
  timed(name: string, run: () => Promise<unknown>): () => Promise<void>;
  /** Mean CPU milliseconds per run of `name` (one decimal); NaN before any run. */
  cpuMs(name: string): number;
}

export function cpuTimer(): CpuTimer {
  const cpu = new Map<string, { micros: number; runs: number }>();
  return {
    timed: (name, run) => async () => {
      const start = process.cpuUsage();
      await run();
      const used = process.cpuUsage(start);
      const c = cpu.get(name) ?? { micros: 0, runs: 0 };
      cpu.set(name, { micros: c.micros + used.user + used.system, runs: c.runs + 1 });
    },
    cpuMs: (name) => {
      const c = cpu.get(name);
      return c === undefined ? Number.NaN : +(c.micros / c.runs / 1000).toFixed(1);
    },
  };
}
