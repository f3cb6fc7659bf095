/**
 * @module Default locations, resolved from the repository root so every command works from any
 * working directory. `HPD_DATA_DIR` moves the builds (e.g. onto a larger disk).
 */
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function buildsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.HPD_DATA_DIR !== undefined && env.HPD_DATA_DIR !== '' ? resolve(env.HPD_DATA_DIR) : join(REPO_ROOT, 'data', 'builds');
}

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.HPD_CACHE_DIR !== undefined && env.HPD_CACHE_DIR !== '' ? resolve(env.HPD_CACHE_DIR) : join(REPO_ROOT, 'data', 'cache');
}

/** The state directory (keys, users, counters): $HPD_STATE_DIR (empty counts as unset), else `<repo>/var`. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HPD_STATE_DIR !== undefined && env.HPD_STATE_DIR !== '' ? resolve(env.HPD_STATE_DIR) : join(REPO_ROOT, 'var');
}
