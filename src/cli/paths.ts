/**
 * @module Default locations, resolved from the repository root so every command works from any
 * working directory. The variables (HPD_DATA_DIR, HPD_CACHE_DIR, HPD_STATE_DIR) are declared in
 * src/config/settings.ts; these read them the one way every command shares.
 */
import { readSetting, REPO_ROOT } from '../config/settings.ts';

export { REPO_ROOT };

export function buildsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return readSetting('dataDir', env);
}

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return readSetting('cacheDir', env);
}

/** The state directory (keys, users, counters): $HPD_STATE_DIR (empty counts as unset), else `<repo>/var`. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return readSetting('stateDir', env);
}
