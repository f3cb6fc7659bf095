// The module hook that runs our TypeScript sources: Node's own type stripping (`module.stripTypeScriptTypes`,
// mode "strip"), which blanks the types out in place. Lines and columns stay those of the .ts file, so
// stack traces and CPU profiles point at the sources with no source map. The sources are
// erasable-syntax-only TypeScript (tsconfig's `erasableSyntaxOnly`) with explicit `.ts` import paths, which
// is all this needs. The hook is synchronous and runs in the importing thread (`module.registerHooks`):
// no loader thread, no message per module.
//
// Stripped text is kept in a cache keyed by the source's hash and the Node version, and V8's compile
// cache sits beside it. Tests and benchmarks start hundreds of processes and REST worker threads, each
// loading ~300 modules; stripping and compiling them again each time was the larger part of a start.
// The cache is an optimisation only: when its directory cannot be written (a read-only install) every
// load strips afresh.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { enableCompileCache, stripTypeScriptTypes } from 'node:module';
import { fileURLToPath } from 'node:url';

const CACHE = fileURLToPath(new URL('../node_modules/.cache/hpd-typescript/', import.meta.url));
/** Part of every cache key: what made the text (a change here must change it, so old texts are not reused). */
const VERSION = `${process.version} strip, no sourceURL\n`;

let cacheUsable = true;
try {
  mkdirSync(CACHE, { recursive: true });
  enableCompileCache(`${CACHE}v8`);
} catch {
  cacheUsable = false;
}

/**
 * Node's loader strips types silently, but the public function that does the same work warns once per
 * process that it is experimental; that line would land on the stderr of every command (a CLI error
 * must be one line), so the warning is held back for the length of the call.
 */
function strip(source) {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    // No sourceUrl: it would append the file's path as a comment, and the cache is keyed by content.
    // Without it, stack traces name the module's own URL.
    return stripTypeScriptTypes(source, { mode: 'strip' });
  } finally {
    process.emitWarning = emitWarning;
  }
}

function stripped(path) {
  const source = readFileSync(path, 'utf8');
  if (!cacheUsable) return strip(source);
  const file = `${CACHE}${createHash('sha1').update(VERSION).update(source).digest('hex')}.js`;
  try {
    return readFileSync(file, 'utf8');
  } catch {
    const code = strip(source);
    try {
      // Written aside then renamed: a concurrent reader sees the whole text or no file.
      const aside = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
      writeFileSync(aside, code);
      renameSync(aside, file);
    } catch {
      cacheUsable = false;
    }
    return code;
  }
}

export function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !/\.m?ts$/.test(new URL(url).pathname)) return nextLoad(url, context);
  return { format: 'module', source: stripped(fileURLToPath(url)), shortCircuit: true };
}
