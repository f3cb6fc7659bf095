// Module hooks that run our TypeScript sources. They were written for Node 20, which cannot strip types;
// the pinned Node 22.23 can, but moving to its built-in stripping (no source maps, different start-up
// cost) is a change to measure on its own, not one to make in passing.
//
// Why not tsx at run time: tsx compiles with esbuild's `keepNames`, which wraps every named closure
// in a `__name(fn, "…")` helper (an Object.defineProperty per closure creation). On the request path
// that cost up to half of a search's engine time (bench:profile). We only need type stripping — the
// sources are erasable-syntax-only TypeScript with explicit `.ts` import paths — so esbuild's plain
// transform is enough, with inline source maps for stack traces and profiles.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

// The tsconfig options that change emitted JavaScript (see tsconfig.json): imports kept exactly as
// written, class fields with define semantics (ES2022+ targets).
const TSCONFIG_RAW = { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } };

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !/\.[cm]?ts$/.test(new URL(url).pathname)) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { code } = await transform(await readFile(path, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcefile: path,
    tsconfigRaw: TSCONFIG_RAW,
  });
  return { format: 'module', source: code, shortCircuit: true };
}
