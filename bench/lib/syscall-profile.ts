/**
 * @module The system calls a server makes per request, read with strace attached to every thread of it
 * for the length of one load run (strace slows a server several times over: these runs are separate
 * from the timed ones and give counts per request, never rates).
 *
 * Two traced runs per server:
 * 1. `strace -c -f -p PID -o FILE`: every call of every thread counted; its summary table gives the
 *    syscalls per request and the most frequent ones.
 * 2. `strace -f -y -s 0 -e trace=write,writev,sendto,sendmsg -e signal=none -p PID -o FILE`: each call of
 *    the send family on its own line, its descriptor annotated (`-y`: `12<socket:[4711]>`, `5<pipe:[…]>`,
 *    `9<anon_inode:[eventfd]>`), no data (`-s 0`). The send calls and the bytes the kernel accepted
 *    (the sum of their return values) count for sockets only: a write to an eventfd is a thread waking
 *    another and one to a pipe is logging, both already in run 1's total. A partial write counts the
 *    bytes the kernel took; the rest comes again in a later call, so the bytes are those of the
 *    responses once each, and the calls show how many pieces they went in.
 * The syscalls strace sees between attaching and the start of the load (and between its end and the
 * detach) count too: an idle server's few timer wake-ups, small against a run's thousands of requests.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** One row of strace's `-c` summary. */
export interface SyscallCount {
  readonly name: string;
  readonly calls: number;
  readonly errors: number;
}

/**
 * The rows of strace's `-c` table, `total` apart. Columns are read at the positions of the dashed rule
 * under the header, since the errors column is blank for calls that never failed.
 */
export function parseStraceSummary(text: string): { rows: SyscallCount[]; total: number } {
  const lines = text.split('\n');
  const rule = lines.findIndex((l) => /^-+( -+)+\s*$/.test(l));
  if (rule < 1) throw new Error(`no strace -c table in: ${text.slice(0, 200)}`);
  const spans: Array<[number, number]> = [];
  for (const m of lines[rule]!.matchAll(/-+/g)) spans.push([m.index, m.index + m[0].length]);
  spans[spans.length - 1]![1] = Number.POSITIVE_INFINITY;
  // A header word may stick out of its column by a character ("% time" over "------"): take the span it starts in.
  const header = lines[rule - 1]!;
  const column = (name: string): number => {
    const at = header.indexOf(name);
    const i = spans.findIndex(([s, e], k) => at >= s - 1 && (at < e || k === spans.length - 1));
    if (at < 0 || i < 0) throw new Error(`no ${name} column in strace -c header: ${header}`);
    return i;
  };
  const [callsCol, errorsCol, nameCol] = [column('calls'), column('errors'), column('syscall')];
  const cell = (line: string, i: number): string => line.slice(spans[i]![0], Math.min(line.length, spans[i]![1] + 1)).trim();
  const rows: SyscallCount[] = [];
  let total = Number.NaN;
  for (const line of lines.slice(rule + 1)) {
    if (line.trim() === '' || /^-+( -+)+\s*$/.test(line)) continue;
    const name = cell(line, nameCol);
    const calls = Number(cell(line, callsCol));
    const errors = Number(cell(line, errorsCol) || 0);
    if (name === '' || !Number.isInteger(calls)) throw new Error(`unreadable strace -c row: ${line}`);
    if (name === 'total') total = calls;
    else rows.push({ name, calls, errors });
  }
  if (Number.isNaN(total)) total = rows.reduce((s, r) => s + r.calls, 0);
  return { rows, total };
}

/** The send family, as traced in run 2. */
export const SEND_CALLS = ['write', 'writev', 'sendto', 'sendmsg'] as const;

export interface SendTrace {
  /** Calls on sockets and the bytes the kernel accepted from them (failed calls included in `socketCalls`). */
  readonly socketCalls: number;
  readonly socketBytes: number;
  /** Calls that returned an error (EAGAIN on a full socket buffer…), any descriptor. */
  readonly failed: number;
  /** Calls on anything else (eventfds, pipes, files) and their bytes. */
  readonly otherCalls: number;
  readonly otherBytes: number;
}

const CALL = new RegExp(`^(\\d+)\\s+(${SEND_CALLS.join('|')})\\((\\d+)(<[^,]*)?,`);
const RESUMED = new RegExp(`^(\\d+)\\s+<\\.\\.\\. (${SEND_CALLS.join('|')}) resumed>`);
const RETURN = /\)\s+=\s+(-?\d+)(?:\s.*)?$/;
const SOCKET = /^<(?:socket|TCP|TCPv6|UDP|UDPv6|UNIX|UNIX-STREAM)[:-]/;

/**
 * Sums the lines strace wrote for run 2 (`-f -y -o`: each line starts with the thread id). A call
 * another thread interrupted is split in two lines, `… <unfinished ...>` and `<... writev resumed>) = N`:
 * the second is matched to the first by thread id.
 */
export function parseSendTrace(text: string): SendTrace {
  let socketCalls = 0;
  let socketBytes = 0;
  let failed = 0;
  let otherCalls = 0;
  let otherBytes = 0;
  const pending = new Map<string, boolean>();
  const count = (socket: boolean, ret: number): void => {
    if (socket) socketCalls++;
    else otherCalls++;
    if (ret < 0) failed++;
    else if (socket) socketBytes += ret;
    else otherBytes += ret;
  };
  for (const line of text.split('\n')) {
    const call = CALL.exec(line);
    if (call !== null) {
      const socket = SOCKET.test(call[4] ?? '');
      if (line.endsWith('<unfinished ...>')) {
        pending.set(call[1]!, socket);
        continue;
      }
      const ret = RETURN.exec(line);
      if (ret !== null) count(socket, Number(ret[1]));
      continue;
    }
    const resumed = RESUMED.exec(line);
    if (resumed !== null) {
      const socket = pending.get(resumed[1]!);
      const ret = RETURN.exec(line);
      pending.delete(resumed[1]!);
      if (socket !== undefined && ret !== null) count(socket, Number(ret[1]));
    }
  }
  return { socketCalls, socketBytes, failed, otherCalls, otherBytes };
}

export interface SyscallProfile {
  /** Run 1: its requests, every syscall per request and the most frequent ones. */
  readonly countRequests: number;
  readonly syscalls: number;
  readonly top: ReadonlyArray<{ readonly name: string; readonly perRequest: number }>;
  /** Run 2: its requests, socket send calls and bytes accepted per request, other writes per request. */
  readonly sendRequests: number;
  readonly sendCalls: number;
  readonly bytes: number;
  readonly failedSends: number;
  readonly otherWrites: number;
}

/** Why a server's syscalls were not measured (strace missing, not allowed to attach…). */
export interface NotProfiled {
  readonly unavailable: string;
}

export interface SyscallProfileOptions {
  readonly pid: number;
  /** Runs the load for about `seconds` and returns how many requests were answered. */
  readonly load: (seconds: number) => Promise<number>;
  readonly countSeconds: number;
  readonly sendSeconds: number;
  /** Where strace's output files go (removed afterwards). */
  readonly dir: string;
  /** How many of the most frequent syscalls to keep. */
  readonly top?: number;
}

/** How long strace gets, after the load's last response, to record the calls it stopped the server in. */
const SETTLE_MS = 200;

/** strace attached to every thread of `pid` while `load` runs; what it wrote to `-o`. */
async function traced(pid: number, args: readonly string[], file: string, seconds: number, load: (s: number) => Promise<number>) {
  const child = spawn('strace', ['-f', ...args, '-p', String(pid), '-o', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('error', (err) => {
      stderr += err.message;
      exited = true;
      resolve();
    });
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  // strace says "Process N attached with K threads" once every thread is traced: only then does the load start.
  const attached = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 15_000);
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (/Process \d+ attached/.test(stderr)) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    void exit.then(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!attached) {
    if (!exited) child.kill('SIGKILL');
    await exit;
    const why = stderr.trim().split('\n').slice(-2).join(' ') || 'no answer';
    throw new Error(stderr.includes('ENOENT') ? 'strace is not installed' : `strace could not attach: ${why}`);
  }
  let requests: number;
  try {
    requests = await load(seconds);
    // The client has the last response as soon as the server's write has put it in the kernel, while
    // strace may still be handling that write's exit: a SIGINT right then can drop the call. A pause
    // lets strace record it; nothing is loaded meanwhile, so no other call is added.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
  } finally {
    // SIGINT: strace detaches from every thread and writes its summary.
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exit;
    clearTimeout(timer);
  }
  const text = readFileSync(file, 'utf8');
  rmSync(file, { force: true });
  return { requests, text };
}

/** Runs 1 and 2 against `pid`; NotProfiled with the reason when strace cannot trace it. */
export async function syscallProfile(o: SyscallProfileOptions): Promise<SyscallProfile | NotProfiled> {
  let count: { requests: number; text: string };
  let send: { requests: number; text: string };
  try {
    count = await traced(o.pid, ['-c'], join(o.dir, `strace-c-${o.pid}`), o.countSeconds, o.load);
    send = await traced(
      o.pid,
      ['-y', '-s', '0', '-e', `trace=${SEND_CALLS.join(',')}`, '-e', 'signal=none'],
      join(o.dir, `strace-send-${o.pid}`),
      o.sendSeconds,
      o.load,
    );
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/^strace (is not installed|could not attach)/.test(message)) return { unavailable: message };
    throw err;
  }
  if (count.requests <= 0 || send.requests <= 0) return { unavailable: 'no request answered under strace' };
  const summary = parseStraceSummary(count.text);
  const sends = parseSendTrace(send.text);
  return {
    countRequests: count.requests,
    syscalls: summary.total / count.requests,
    top: [...summary.rows]
      .sort((a, b) => b.calls - a.calls)
      .slice(0, o.top ?? 6)
      .map((r) => ({ name: r.name, perRequest: r.calls / count.requests })),
    sendRequests: send.requests,
    sendCalls: sends.socketCalls / send.requests,
    bytes: sends.socketBytes / send.requests,
    failedSends: sends.failed / send.requests,
    otherWrites: sends.otherCalls / send.requests,
  };
}
