/**
 * @module The service under fuzzing, as operators run it: `node bin/hpd.js serve` in a child process
 * over the fixture build, with a state directory holding one key per tier and a revoked one, so that
 * "the process is still alive" and "its RSS stayed bounded" are facts about a real process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, freePorts } from '../../bench/lib/processes.ts';
import { createKey, revokeKey } from '../../src/policy/api-keys.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import { buildFixture } from '../helpers/fixture-build.ts';
import type { Credential } from './fuzz-cases.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** High enough that the daily quota never turns the fuzz run into a stream of 429s. */
const QUOTA = '1000000000';

export interface FuzzService {
  readonly pid: number;
  readonly restPort: number;
  readonly mcpPort: number;
  /** The `Authorization` value of each credential kind; null for none. */
  readonly authorization: Readonly<Record<Credential, string | null>>;
  /** Resident set of the child in KiB (VmRSS), or null when it is gone. */
  rssKiB(): number | null;
  alive(): boolean;
  /** The child's stderr so far (its 500s and crashes are reported there). */
  stderr(): string;
  close(): Promise<void>;
}

export async function startFuzzService(): Promise<FuzzService> {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-fuzz-'));
  let child: ChildProcess | null = null;
  try {
    const buildsRoot = await buildFixture(dir);
    const stateDir = join(dir, 'state');
    const now = Date.now();
    const store = openLmdbStateStore(stateDir);
    const keys: Record<string, string> = {};
    try {
      for (const tier of ['free', 'pro', 'enterprise'] as const)
        keys[tier] = (await createKey(store, { tier, userId: `fuzz-${tier}`, label: 'fuzz', now })).plaintext;
      const revoked = await createKey(store, { tier: 'pro', userId: 'fuzz-revoked', label: 'fuzz', now });
      await revokeKey(store, revoked.record.id, now);
      keys.revoked = revoked.plaintext;
    } finally {
      await store.close();
    }
    const [restPort, mcpPort, authPort] = (await freePorts(3)) as [number, number, number];
    const proc = spawn(process.execPath, ['bin/hpd.js', 'serve'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv({
        HPD_HOST: '127.0.0.1',
        HPD_PORT: String(restPort),
        HPD_MCP_PORT: String(mcpPort),
        HPD_AUTH_PORT: String(authPort),
        HPD_DATA_DIR: buildsRoot,
        HPD_STATE_DIR: stateDir,
        HPD_QUOTA_FREE: QUOTA,
        HPD_QUOTA_PRO: QUOTA,
        HPD_QUOTA_ENTERPRISE: QUOTA,
      }),
    });
    child = proc;
    let err = '';
    let out = '';
    proc.stderr!.setEncoding('utf8').on('data', (s: string) => {
      // Keep the head (first failures) and the tail (how it ended) of a long run.
      err = err.length < 200_000 ? err + s : `${err.slice(0, 100_000)}\n…\n${(err.slice(-100_000) + s).slice(-100_000)}`;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`hpd serve did not start in 60 s: ${out}${err}`)), 60_000);
      proc.stdout!.setEncoding('utf8').on('data', (s: string) => {
        out += s;
        if (out.includes('hpd: MCP on')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`hpd serve exited with ${String(code)} before listening: ${err}`));
      });
    });
    const pid = proc.pid!;
    return {
      pid,
      restPort,
      mcpPort,
      authorization: {
        none: null,
        free: `Bearer ${keys.free!}`,
        pro: `Bearer ${keys.pro!}`,
        enterprise: `Bearer ${keys.enterprise!}`,
        revoked: `Bearer ${keys.revoked!}`,
        garbage: `Bearer hpd_${'0123456789abcdef'.repeat(3).slice(0, 40)}`,
      },
      rssKiB() {
        try {
          const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
          return m === null ? null : Number(m[1]);
        } catch {
          return null;
        }
      },
      alive: () => proc.exitCode === null && proc.signalCode === null,
      stderr: () => err,
      async close() {
        if (proc.exitCode === null && proc.signalCode === null) {
          const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
          proc.kill('SIGTERM');
          const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    if (child !== null && child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
