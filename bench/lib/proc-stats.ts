/**
 * @module What the kernel accounted to a process over a load run, summed over every thread (task) of
 * it: user and system CPU, voluntary and involuntary context switches, migrations between CPUs.
 *
 * `/proc/PID/stat` and `/proc/PID/status` describe the process as a whole only for CPU time; their
 * context switches are the main thread's alone, and a server's work happens in its REST worker, libuv's
 * pool and V8's helper threads too. So each snapshot reads every `/proc/PID/task/TID/{stat,status,sched}`.
 * CPU time comes in clock ticks (USER_HZ, 1/100 s on Linux), so a run must last long enough for its
 * µs per request to be exact to the precision printed (4 s at 10k requests/s: ± 0.25 µs).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** One thread's counters since it started. */
export interface TaskCounters {
  readonly userTicks: number;
  readonly sysTicks: number;
  readonly voluntary: number;
  readonly involuntary: number;
  /** `se.nr_migrations` of its sched file; null when the kernel does not expose it (no CONFIG_SCHED_DEBUG). */
  readonly migrations: number | null;
}

export interface ProcSnapshot {
  readonly pid: number;
  /** By thread id. */
  readonly tasks: ReadonlyMap<number, TaskCounters>;
}

/** The difference of two snapshots, per request. */
export interface PerRequestStats {
  readonly requests: number;
  readonly userUs: number;
  readonly sysUs: number;
  readonly voluntary: number;
  readonly involuntary: number;
  /** Null when the kernel does not expose migrations. */
  readonly migrations: number | null;
  /** Threads that started between the snapshots (counted from zero) and that ended (their last interval lost). */
  readonly threadsStarted: number;
  readonly threadsEnded: number;
}

/**
 * utime and stime (fields 14 and 15, clock ticks) of a `stat` line. The comm field (2) is the thread's
 * name in parentheses and may itself hold spaces and parentheses, so the fields are counted from the
 * last ')'.
 */
export function parseStat(text: string): { userTicks: number; sysTicks: number } {
  const close = text.lastIndexOf(')');
  if (close < 0) throw new Error(`not a /proc stat line: ${text.slice(0, 80)}`);
  // After ") " comes field 3 (state): utime is field 14, so index 11 of what follows.
  const fields = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const userTicks = Number(fields[11]);
  const sysTicks = Number(fields[12]);
  if (!Number.isInteger(userTicks) || !Number.isInteger(sysTicks))
    throw new Error(`no utime/stime in /proc stat line: ${text.slice(0, 80)}`);
  return { userTicks, sysTicks };
}

/** voluntary_ctxt_switches and nonvoluntary_ctxt_switches of a `status` file. */
export function parseStatus(text: string): { voluntary: number; involuntary: number } {
  const field = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(text);
    if (m === null) throw new Error(`no ${name} in /proc status`);
    return Number(m[1]);
  };
  return { voluntary: field('voluntary_ctxt_switches'), involuntary: field('nonvoluntary_ctxt_switches') };
}

/** A process's resident memory, in bytes: now (VmRSS) and the most it has held since it started (VmHWM). */
export interface Resident {
  readonly rssBytes: number;
  readonly peakBytes: number;
}

/** VmRSS and VmHWM of a process's `status` file (the kernel writes them in kB, meaning KiB). */
export function parseResident(text: string): Resident {
  const kib = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text);
    if (m === null) throw new Error(`no ${name} in /proc status`);
    return Number(m[1]) * 1024;
  };
  return { rssBytes: kib('VmRSS'), peakBytes: kib('VmHWM') };
}

/** The resident memory of `pid` now (every thread shares it). Throws when the process is gone. */
export function resident(pid: number): Resident {
  return parseResident(readFileSync(`/proc/${pid}/status`, 'utf8'));
}

/** `se.nr_migrations` of a `sched` file, or null when it has none. */
export function parseSched(text: string): number | null {
  const m = /^se\.nr_migrations\s+:\s+(\d+)$/m.exec(text);
  return m === null ? null : Number(m[1]);
}

let clockTicks: number | undefined;

/** USER_HZ: the unit of utime and stime (`getconf CLK_TCK`; 100 when getconf is missing, as on every Linux). */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(r.stdout?.trim());
    clockTicks = r.status === 0 && Number.isInteger(n) && n > 0 ? n : 100;
  }
  return clockTicks;
}

const readOptional = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** Every thread of `pid` now; a thread that ends while it is read is left out. Throws when the process is gone. */
export function snapshot(pid: number): ProcSnapshot {
  const tasks = new Map<number, TaskCounters>();
  for (const name of readdirSync(`/proc/${pid}/task`)) {
    const dir = `/proc/${pid}/task/${name}`;
    const stat = readOptional(`${dir}/stat`);
    const status = readOptional(`${dir}/status`);
    if (stat === null || status === null) continue;
    const sched = readOptional(`${dir}/sched`);
    tasks.set(Number(name), { ...parseStat(stat), ...parseStatus(status), migrations: sched === null ? null : parseSched(sched) });
  }
  return { pid, tasks };
}

/**
 * What happened between two snapshots of one process, divided by `requests`. A thread only in `after`
 * started in between and counts with all it has; a thread only in `before` ended in between, and what it
 * did after `before` is no longer readable: it counts nothing (`threadsEnded` says how many).
 */
export function perRequest(before: ProcSnapshot, after: ProcSnapshot, requests: number, hz = ticksPerSecond()): PerRequestStats {
  if (before.pid !== after.pid) throw new Error(`snapshots of two processes (${before.pid}, ${after.pid})`);
  if (!(requests > 0)) throw new Error(`no requests to divide by (${requests})`);
  const zero: TaskCounters = { userTicks: 0, sysTicks: 0, voluntary: 0, involuntary: 0, migrations: 0 };
  let user = 0;
  let sys = 0;
  let voluntary = 0;
  let involuntary = 0;
  let migrations: number | null = 0;
  let started = 0;
  for (const [tid, a] of after.tasks) {
    const b = before.tasks.get(tid);
    if (b === undefined) started++;
    const from = b ?? zero;
    user += a.userTicks - from.userTicks;
    sys += a.sysTicks - from.sysTicks;
    voluntary += a.voluntary - from.voluntary;
    involuntary += a.involuntary - from.involuntary;
    migrations =
      migrations === null || a.migrations === null || from.migrations === null ? null : migrations + a.migrations - from.migrations;
  }
  let ended = 0;
  for (const tid of before.tasks.keys()) if (!after.tasks.has(tid)) ended++;
  const us = 1e6 / hz / requests;
  return {
    requests,
    userUs: user * us,
    sysUs: sys * us,
    voluntary: voluntary / requests,
    involuntary: involuntary / requests,
    migrations: migrations === null ? null : migrations / requests,
    threadsStarted: started,
    threadsEnded: ended,
  };
}
