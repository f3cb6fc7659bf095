/** @module The repository's files as the docs tests read them. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every .ts file under `dir` (relative to the repository, `/`-separated). */
export function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(REPO_ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...tsFiles(path));
    else if (e.name.endsWith('.ts')) out.push(path);
  }
  return out;
}
