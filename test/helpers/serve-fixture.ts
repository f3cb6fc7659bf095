/**
 * @module What a test needs to run `hpd serve` as a child process on the fixture dataset: a build, a
 * state directory holding one API key, free ports and the environment naming them.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createKey } from '../../src/policy/api-keys.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import type { Tier } from '../../src/policy/tiers.ts';
import { buildFixture } from './fixture-build.ts';
import { freePorts } from './services.ts';

/** The `hpd` entry, to spawn with process.execPath. */
export const HPD = fileURLToPath(new URL('../../bin/hpd.js', import.meta.url));

export interface ServeFixture {
  /** Temporary directory holding the build and the state; the caller removes it. */
  readonly dir: string;
  readonly stateDir: string;
  readonly key: string;
  readonly restPort: number;
  readonly mcpPort: number;
  readonly authPort: number;
  /** The environment for `hpd serve`: data and state directories, ports, `extraEnv`; no test-runner context. */
  readonly env: NodeJS.ProcessEnv;
}

export async function prepareServe(
  prefix: string,
  user: { userId: string; tier: Tier },
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<ServeFixture> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const buildsRoot = await buildFixture(dir);
  const stateDir = join(dir, 'state');
  const store = openLmdbStateStore(stateDir);
  const key = (await createKey(store, { ...user, label: 'test', now: Date.now() })).plaintext;
  await store.close();
  const [restPort, mcpPort, authPort] = (await freePorts(3)) as [number, number, number];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HPD_DATA_DIR: buildsRoot,
    HPD_STATE_DIR: stateDir,
    HPD_PORT: String(restPort),
    HPD_MCP_PORT: String(mcpPort),
    HPD_AUTH_PORT: String(authPort),
    ...extraEnv,
  };
  // A child must not report into this test run.
  delete env.NODE_TEST_CONTEXT;
  return { dir, stateDir, key, restPort, mcpPort, authPort, env };
}

export interface ServeChild {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** Everything the server wrote to stdout so far (its human start lines, then its JSON logs). */
  stdout(): string;
  /** Resolves with the exit code when the process ends. */
  readonly exited: Promise<number | null>;
}

/** Spawns `hpd serve` with `env`; resolves once it printed its MCP line (every listener is up). */
export async function spawnServe(env: NodeJS.ProcessEnv): Promise<ServeChild> {
  const child = spawn(process.execPath, [HPD, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stdout = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (/MCP on /.test(stdout)) resolve();
    });
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { child, stderr: () => stderr, stdout: () => stdout, exited };
}
