/** @module Runs the `hpd` command line in a child process and collects its exit code and output. */
import { spawn } from 'node:child_process';
import { HPD } from './serve-fixture.ts';

export interface HpdRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `env` is the whole environment (HPD_DEBUG and the test runner's context are removed); killed after `timeoutMs`. */
export function runHpd(args: readonly string[], opts: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs?: number }): Promise<HpdRun> {
  const env = { ...opts.env };
  delete env.HPD_DEBUG;
  delete env.NODE_TEST_CONTEXT;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HPD, ...args], { cwd: opts.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
