/**
 * @module The report's table "Per request, what the kernel sees": for each workload, each server's CPU
 * (user, system), syscalls, socket send calls, bytes the kernel accepted, context switches and
 * migrations per request, then each of ours ÷ the ceiling. These are the figures that travel between
 * machines: a requests/s ratio moves with the machine, while how many syscalls, switches and bytes one
 * request costs says why.
 *
 * CPU, switches and migrations are medians over the timed runs (bench/lib/proc-stats.ts); syscalls,
 * send calls and bytes come from one extra run under strace (bench/lib/syscall-profile.ts). A cell
 * without a figure says why.
 */
import type { PerRequestStats } from './proc-stats.ts';
import type { NotProfiled, SyscallProfile } from './syscall-profile.ts';
import { median } from './util.ts';

/** One server's figures for one workload. */
export interface KernelFigures {
  readonly server: string;
  /** One entry per timed run. */
  readonly runs: readonly PerRequestStats[];
  /** The traced runs' profile, why it is missing, or null with `notTraced` saying why it was not taken. */
  readonly syscalls: SyscallProfile | NotProfiled | null;
}

export interface KernelWorkload {
  readonly workload: string;
  /** Ours first, the ceiling last. */
  readonly servers: readonly KernelFigures[];
}

export const KERNEL_COLUMNS = [
  'user µs',
  'sys µs',
  'syscalls',
  'send calls',
  'bytes to the kernel',
  'voluntary switches',
  'involuntary switches',
  'migrations',
] as const;

/** A figure: three significant digits, whole numbers from 1,000 on, tiny ones in exponent form. */
export function fmtFigure(x: number): string {
  if (x === 0) return '0';
  if (Math.abs(x) >= 1000) return x.toFixed(0);
  if (Math.abs(x) < 1e-4) return x.toExponential(1);
  return String(Number(x.toPrecision(3)));
}

type Cell = number | string;

/** The eight cells of one server: numbers, or the reason there is none. */
function cells(f: KernelFigures, notTraced: string): Cell[] {
  const runs = f.runs;
  const cpu = (pick: (r: PerRequestStats) => number | null): Cell => {
    if (runs.length === 0) return 'not measured (no timed run)';
    const xs = runs.map(pick);
    if (xs.some((x) => x === null)) return 'not measured (no /proc/PID/task/TID/sched: kernel without CONFIG_SCHED_DEBUG)';
    return median(xs as number[]);
  };
  const s = f.syscalls;
  const sys = (pick: (p: SyscallProfile) => number): Cell =>
    s === null ? `not measured (${notTraced})` : 'unavailable' in s ? `not measured (${s.unavailable})` : pick(s);
  return [
    cpu((r) => r.userUs),
    cpu((r) => r.sysUs),
    sys((p) => p.syscalls),
    sys((p) => p.sendCalls),
    sys((p) => p.bytes),
    cpu((r) => r.voluntary),
    cpu((r) => r.involuntary),
    cpu((r) => r.migrations),
  ];
}

/** A reason comes from a tool's message: a '|' in it would split the Markdown cell. */
const text = (c: Cell): string => (typeof c === 'number' ? fmtFigure(c) : c.replaceAll('|', '/'));

function ratio(ours: Cell, ceiling: Cell): string {
  if (typeof ours === 'string' || typeof ceiling === 'string') return 'not measured (a side is missing)';
  if (ceiling === 0) return ours === 0 ? 'n/a (both 0)' : 'n/a (ceiling 0)';
  return `${fmtFigure(ours / ceiling)}×`;
}

/**
 * The table (Markdown lines), then the most frequent syscalls of every traced run. `notTraced`: why a
 * server without a profile has none (e.g. "--short traces search only").
 */
export function kernelTable(workloads: readonly KernelWorkload[], notTraced = 'not traced'): string[] {
  const lines = [`| workload | server | ${KERNEL_COLUMNS.join(' | ')} |`, `|---|---|${KERNEL_COLUMNS.map(() => '---:').join('|')}|`];
  const notes: string[] = [];
  for (const w of workloads) {
    const ceiling = w.servers.at(-1)!;
    const ceilingCells = cells(ceiling, notTraced);
    const all = w.servers.map((f) => ({ f, c: f === ceiling ? ceilingCells : cells(f, notTraced) }));
    for (const { f, c } of all) lines.push(`| ${w.workload} | ${f.server} | ${c.map(text).join(' | ')} |`);
    for (const { f, c } of all.slice(0, -1)) {
      lines.push(`| ${w.workload} | ${f.server} ÷ ${ceiling.server} | ${c.map((x, i) => ratio(x, ceilingCells[i]!)).join(' | ')} |`);
    }
    for (const f of w.servers) {
      const ended = f.runs.reduce((n, r) => n + r.threadsEnded, 0);
      if (ended > 0)
        notes.push(`- ${w.workload}, ${f.server}: ${ended} threads ended during the timed runs; their last moments are not counted.`);
      const s = f.syscalls;
      if (s === null || 'unavailable' in s) continue;
      const top = s.top.map((x) => `${x.name} ${fmtFigure(x.perRequest)}`).join(', ');
      notes.push(
        `- ${w.workload}, ${f.server} (${s.countRequests} and ${s.sendRequests} requests traced): ${top}; writes to eventfds and pipes ${fmtFigure(s.otherWrites)}, failed sends (EAGAIN…) ${fmtFigure(s.failedSends)}`,
      );
    }
  }
  if (notes.length > 0)
    lines.push('', 'Most frequent syscalls per request (strace -c -f) and the writes that are not sends:', '', ...notes);
  return lines;
}
