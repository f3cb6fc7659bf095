/**
 * @module Where one CPU's time went over a load run, from the kernel's own accounts (`/proc/stat`): busy,
 * idle, and stolen — the time the hypervisor ran something else while this virtual CPU had work. On a
 * shared virtual machine a long run's tail can come from the machine rather than the server: stolen
 * time counted on the server's core during the run says so, beside how busy the server kept that core.
 */
import { readFileSync } from 'node:fs';

/** One CPU's counters since boot, in clock ticks (USER_HZ). */
export interface CoreTicks {
  readonly busy: number;
  readonly idle: number;
  readonly steal: number;
}

/** The share of a run's ticks on one CPU: busy (user, nice, system, irq, softirq), idle (with iowait), stolen. */
export interface CoreShares {
  readonly busy: number;
  readonly idle: number;
  readonly steal: number;
}

/**
 * The counters of `cpu` (or of every CPU summed, for null) in the text of `/proc/stat`: `cpuN user nice
 * system idle iowait irq softirq steal guest guest_nice` (guest time is already counted in user).
 */
export function parseCoreTicks(statText: string, cpu: number | null): CoreTicks {
  const label = cpu === null ? 'cpu' : `cpu${cpu}`;
  for (const line of statText.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[0] !== label) continue;
    const n = fields.slice(1, 9).map(Number);
    if (n.length < 8 || n.some((x) => !Number.isFinite(x))) throw new Error(`/proc/stat: unreadable line for ${label}: ${line}`);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = n as [number, number, number, number, number, number, number, number];
    return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal };
  }
  throw new Error(`/proc/stat has no line for ${label}`);
}

export function coreTicks(cpu: number | null): CoreTicks {
  return parseCoreTicks(readFileSync('/proc/stat', 'utf8'), cpu);
}

/** What share of the ticks between two readings was busy, idle and stolen (zeros when no tick passed). */
export function coreShares(before: CoreTicks, after: CoreTicks): CoreShares {
  const busy = after.busy - before.busy;
  const idle = after.idle - before.idle;
  const steal = after.steal - before.steal;
  const total = busy + idle + steal;
  if (total <= 0) return { busy: 0, idle: 0, steal: 0 };
  return { busy: busy / total, idle: idle / total, steal: steal / total };
}
