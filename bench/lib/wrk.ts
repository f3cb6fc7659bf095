/**
 * @module Running wrk (Debian's package) or wrk2 on one core with bench/wrk/rotate.lua and reading its
 * summary.
 *
 * wrk measures each request from the moment it is written to the moment its response is parsed. Its
 * paced runs (`paceMs`, used by bench:workers) give every connection a random think time (`delay()` in
 * the script): a closed loop, whose offered rate depends on the server's latency. Open-loop runs
 * (`rate`) use wrk2 instead (bench/lib/wrk2.ts): a constant request rate, latency measured from when
 * each request was due, read from its `--latency -U` distributions. Errors are the socket errors
 * (connect, read, write, timeout) and responses with status ≥ 400 (`errors.status`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedCommand } from './processes.ts';
import { parseWrk2Latency, type Wrk2Latency } from './wrk2.ts';

const SCRIPT = fileURLToPath(new URL('../wrk/rotate.lua', import.meta.url));

export interface WrkRun {
  readonly requests: number;
  readonly duration_s: number;
  readonly rps: number;
  /** Mean response size on the wire (headers and body), bytes. */
  readonly bytes_per_response: number;
  readonly errors: {
    readonly connect: number;
    readonly read: number;
    readonly write: number;
    readonly status: number;
    readonly timeout: number;
    readonly total: number;
  };
  readonly latency_ms: {
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly p999: number;
    readonly max: number;
    readonly mean: number;
  };
  readonly connections: number;
  /** Mean think time per request in ms; 0 at full load. */
  readonly pace_ms: number;
  /** Open-loop runs (wrk2): the offered rate and both latency distributions; `latency_ms` is the corrected one. */
  readonly open_loop?: { readonly rate: number } & Wrk2Latency;
}

export interface WrkOptions {
  /** Origin, e.g. http://127.0.0.1:8080 (paths come from the URL file). */
  readonly origin: string;
  readonly urlsFile: string;
  readonly headers: readonly string[];
  readonly connections: number;
  readonly durationS: number;
  readonly paceMs: number;
  readonly cpu: number | null;
  readonly timeoutS?: number;
  /** Open loop: requests per second offered by wrk2 (`binary` must then be wrk2). */
  readonly rate?: number;
  /** The load generator; default `wrk` from PATH. */
  readonly binary?: string;
  /** Index of the first URL of the file to send (a run continues the stream of the previous one). */
  readonly offset?: number;
}

/** wrk's version line, or null when wrk is not installed. */
export function wrkVersion(): string | null {
  const r = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (r.error !== undefined) return null;
  const line = `${r.stdout}${r.stderr}`.split('\n').find((l) => l.startsWith('wrk '));
  return line === undefined ? 'wrk' : line.replace(/ Copyright.*$/, '').trim();
}

export async function runWrk(o: WrkOptions): Promise<WrkRun> {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-wrk-'));
  const out = join(dir, 'summary.json');
  try {
    const args = ['-t1', `-c${o.connections}`, `-d${o.durationS}s`, `--timeout`, `${o.timeoutS ?? 5}s`, '-s', SCRIPT];
    if (o.rate !== undefined) args.push('-R', String(Math.max(1, Math.round(o.rate))), '--latency', '-U');
    for (const h of o.headers) args.push('-H', h);
    args.push(`${o.origin}/`);
    const [cmd, argv] = pinnedCommand(o.cpu, o.binary ?? 'wrk', args);
    const env = {
      ...process.env,
      HPD_WRK_URLS: o.urlsFile,
      HPD_WRK_PACE: String(o.paceMs),
      HPD_WRK_OUT: out,
      HPD_WRK_OFFSET: String(o.offset ?? 0),
    };
    const { code, stderr, stdout } = await new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve, reject) => {
      const child = spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('error', reject);
      child.once('exit', (c) => resolve({ code: c, stderr, stdout }));
    });
    if (code !== 0) throw new Error(`wrk exited ${code}: ${stderr.trim() || stdout.trim()}`);
    const s = JSON.parse(readFileSync(out, 'utf8')) as {
      requests: number;
      duration_us: number;
      bytes: number;
      errors: { connect: number; read: number; write: number; status: number; timeout: number };
      latency_us: { min: number; mean: number; max: number; p50: number; p90: number; p99: number; p999: number };
    };
    const ms = (us: number): number => us / 1000;
    const e = s.errors;
    const open = o.rate === undefined ? undefined : { rate: o.rate, ...parseWrk2Latency(stdout) };
    const c = open?.corrected;
    return {
      requests: s.requests,
      duration_s: s.duration_us / 1e6,
      rps: s.requests / (s.duration_us / 1e6),
      bytes_per_response: s.requests > 0 ? s.bytes / s.requests : 0,
      errors: { ...e, total: e.connect + e.read + e.write + e.status + e.timeout },
      latency_ms:
        c === undefined
          ? {
              p50: ms(s.latency_us.p50),
              p90: ms(s.latency_us.p90),
              p99: ms(s.latency_us.p99),
              p999: ms(s.latency_us.p999),
              max: ms(s.latency_us.max),
              mean: ms(s.latency_us.mean),
            }
          : { p50: c.p50, p90: c.p90, p99: c.p99, p999: c.p999, max: c.max, mean: ms(s.latency_us.mean) },
      connections: o.connections,
      pace_ms: o.paceMs,
      ...(open === undefined ? {} : { open_loop: open }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ends the process (exit 2, one line) when wrk is missing: every load bench needs it. */
export function requireWrk(log: (line: string) => void): void {
  if (wrkVersion() !== null) return;
  log('wrk is not installed (apt-get install -y wrk)');
  process.exit(2);
}
