/**
 * @module Integrity of a build directory: the files it must hold, their sizes and SHA-256 sums.
 *
 * The build hash (the directory name) is computed over the *inputs*, so it says nothing about whether
 * the bytes on disk are the bytes the compiler wrote. The compiler therefore records every output file
 * as `{ name, bytes, sha256 }` in `manifest.json`, and the manifest's own sum in `SHA256SUMS` beside it
 * (in `sha256sum` format, so `sha256sum -c SHA256SUMS` inside a build directory checks it by hand too).
 * The manifest cannot carry its own sum, and without one a flipped digit in a count or in
 * `data_freshness` would be served silently; the sidecar closes that gap, and a damaged sidecar is
 * refused like any other damaged file (fail closed).
 *
 * Readers check sizes before mapping anything (a truncated LMDB file is a SIGBUS on first touch, with
 * nothing logged) and checksums when a process first adopts a build. Every failure is one
 * {@link BuildIntegrityError} whose message is a single line naming the build and the file.
 */
import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readFileSync, readSync, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import { LMDB_FILE, MANIFEST_FILE, SUMS_FILE, TABLES_FILE } from './build-format.ts';
import type { BuildFile, BuildManifest } from './manifest.ts';

/** Files every checksummed build must list. LMDB's `data.mdb-lock` is deliberately not one: readers write it. */
export const OUTPUT_FILES: readonly string[] = [LMDB_FILE, TABLES_FILE];

const HASH_RE = /^[0-9a-f]{64}$/;
const SHORT = 12;

/** A build directory that is damaged, incomplete or not what its name says. The message is one line. */
export class BuildIntegrityError extends Error {
  /** `<year>/<hash prefix>` of the build. */
  readonly build: string;
  /** The file at fault (`manifest.json`, `data.mdb`, …). */
  readonly file: string;
  /** What is wrong with it, without the build and file prefix. */
  readonly problem: string;
  constructor(build: string, file: string, problem: string) {
    super(`build ${build}: ${file}: ${problem}`);
    this.name = 'BuildIntegrityError';
    this.build = build;
    this.file = file;
    this.problem = problem;
  }
}

export interface BuildCheck {
  readonly manifest: BuildManifest;
  /** `<year>/<hash prefix>`, as in error messages. */
  readonly label: string;
  /**
   * Null for a checksummed build. For a build written before checksums existed (format 1), the one-line
   * reason it could only be size-checked: such builds are served with this as a warning, and `hpd build`
   * and `hpd verify` treat them as needing a rebuild.
   */
  readonly legacy: string | null;
  /** True when the SHA-256 of every output file was computed and matched. */
  readonly checksummed: boolean;
  /** Bytes of the output files. */
  readonly bytes: number;
  /** Time spent hashing, in seconds (0 when only sizes were checked). */
  readonly hashSeconds: number;
}

export interface CheckOptions {
  /** Hash the output files (otherwise only the manifest's own sum and the sizes are checked). */
  readonly checksums: boolean;
  /**
   * The build hash the manifest must carry. Defaults to the directory name when that is a build hash,
   * which is what makes a manifest copied into the wrong directory, or one whose hash was damaged, fail.
   */
  readonly expectedHash?: string;
}

/** SHA-256 of a file, read in chunks (a 100 MB build is never held in memory twice). */
export function sha256File(path: string): string {
  const h = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(4 << 20);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return h.digest('hex');
}

/** Describes the output files of a freshly written build, for its manifest. */
export function describeOutputs(dir: string, names: readonly string[] = OUTPUT_FILES): BuildFile[] {
  return names.map((name) => {
    const path = `${dir}/${name}`;
    return { name, bytes: lstatSync(path).size, sha256: sha256File(path) };
  });
}

/** The `SHA256SUMS` text of a build: its output files, then the manifest (written last). */
export function sumsText(outputs: readonly BuildFile[], manifestSha256: string): string {
  return `${[...outputs.map((f) => `${f.sha256}  ${f.name}`), `${manifestSha256}  ${MANIFEST_FILE}`].join('\n')}\n`;
}

/**
 * Checks a build directory against its manifest: manifest sum, parse, build hash, sizes, and (when asked)
 * checksums. Throws {@link BuildIntegrityError} at the first problem.
 */
export function checkBuild(dir: string, opts: CheckOptions): BuildCheck {
  const base = basename(dir);
  const expected = opts.expectedHash ?? (HASH_RE.test(base) ? base : undefined);
  const label = `${basename(dirname(dir))}/${(expected ?? base).slice(0, SHORT)}`;
  const fail = (file: string, problem: string): never => {
    throw new BuildIntegrityError(label, file, problem);
  };

  const manifestBytes = readOptional(`${dir}/${MANIFEST_FILE}`) ?? fail(MANIFEST_FILE, 'missing');
  const sumsBytes = readOptional(`${dir}/${SUMS_FILE}`);
  const sums = sumsBytes === null ? null : parseSums(sumsBytes.toString('utf8'), (p) => fail(SUMS_FILE, p));
  if (sums !== null) {
    const want = sums.get(MANIFEST_FILE) ?? fail(SUMS_FILE, `no line for ${MANIFEST_FILE}`);
    const got = createHash('sha256').update(manifestBytes).digest('hex');
    if (got !== want) fail(MANIFEST_FILE, `sha256 mismatch (${SUMS_FILE} ${want.slice(0, SHORT)}, file ${got.slice(0, SHORT)})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(manifestBytes.toString('utf8'));
  } catch (err) {
    return fail(MANIFEST_FILE, `not valid JSON (${(err as Error).message.split('\n')[0]})`);
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { build_hash?: unknown }).build_hash !== 'string') {
    return fail(MANIFEST_FILE, 'not a build manifest (no build_hash)');
  }
  const manifest = parsed as BuildManifest;
  if (expected !== undefined && manifest.build_hash !== expected) {
    fail(MANIFEST_FILE, `build hash ${manifest.build_hash.slice(0, SHORT)} does not match the directory (${expected.slice(0, SHORT)})`);
  }

  const outputs = (manifest as { outputs?: unknown }).outputs;
  if (outputs === undefined && sums === null) {
    // A build from before checksums (format 1): its `files` record still gives sizes, which is what
    // keeps a truncated file from crashing the reader. Served with a warning, rebuilt by `hpd build`.
    let bytes = 0;
    for (const [name, size] of Object.entries(manifest.files ?? {})) {
      checkSize(dir, name, size, fail);
      bytes += size;
    }
    const legacy = `build ${label}: no checksums (format ${String(manifest.format_version)}, compiler ${String(manifest.compiler_version)}): only sizes were checked; run hpd build --year ${basename(dirname(dir))} to rebuild it`;
    return { manifest, label, legacy, checksummed: false, bytes, hashSeconds: 0 };
  }
  if (sums === null) fail(SUMS_FILE, 'missing');
  if (!Array.isArray(outputs)) return fail(MANIFEST_FILE, 'no list of output files (outputs)');
  const files = outputs as unknown[];
  for (const f of files) {
    // Plain names only: a damaged manifest must not make the reader hash files outside the build.
    const ok =
      typeof f === 'object' &&
      f !== null &&
      typeof (f as BuildFile).name === 'string' &&
      /^[\w.-]+$/.test((f as BuildFile).name) &&
      !(f as BuildFile).name.startsWith('..') &&
      Number.isSafeInteger((f as BuildFile).bytes) &&
      HASH_RE.test(String((f as BuildFile).sha256));
    if (!ok) fail(MANIFEST_FILE, `malformed entry in outputs: ${JSON.stringify(f).slice(0, 80)}`);
  }
  const listed = files as BuildFile[];
  for (const name of OUTPUT_FILES) if (!listed.some((f) => f.name === name)) fail(MANIFEST_FILE, `lists no sha256 for ${name}`);
  for (const f of listed) {
    if (sums!.get(f.name) !== f.sha256) fail(SUMS_FILE, `${f.name} is not listed with the sha256 the manifest gives`);
  }

  // Sizes of everything before a single byte is hashed or mapped: cheap, and the truncation guard.
  let bytes = 0;
  for (const f of listed) {
    checkSize(dir, f.name, f.bytes, fail);
    bytes += f.bytes;
  }
  let hashSeconds = 0;
  if (opts.checksums) {
    const started = performance.now();
    for (const f of listed) {
      const got = sha256File(`${dir}/${f.name}`);
      if (got !== f.sha256) fail(f.name, `sha256 mismatch (manifest ${f.sha256.slice(0, SHORT)}, file ${got.slice(0, SHORT)})`);
    }
    hashSeconds = (performance.now() - started) / 1000;
  }
  return { manifest, label, legacy: null, checksummed: opts.checksums, bytes, hashSeconds };
}

function checkSize(dir: string, name: string, bytes: number, fail: (file: string, problem: string) => never): void {
  let st: Stats;
  try {
    st = lstatSync(`${dir}/${name}`);
  } catch {
    fail(name, 'missing');
  }
  if (!st.isFile()) fail(name, 'not a regular file');
  if (st.size !== bytes) fail(name, `size mismatch (manifest ${bytes} bytes, file ${st.size} bytes)`);
}

function readOptional(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function parseSums(text: string, fail: (problem: string) => never): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (m === null) return fail(`malformed line "${line.slice(0, 40)}"`);
    out.set(m[2]!, m[1]!);
  }
  return out;
}

/**
 * Builds already checksummed by this process, by directory, with the identity of their files then.
 * A server adopts a build once; later opens of the same unchanged files (reloads, tests) skip hashing,
 * but a file replaced or rewritten since (new inode, size or mtime) is hashed again.
 */
const adopted = new Map<string, string>();

function fileIdentity(dir: string, manifest: BuildManifest): string {
  const names = [MANIFEST_FILE, SUMS_FILE, ...(manifest.outputs ?? []).map((f) => f.name)];
  return names
    .map((n) => {
      const st = lstatSync(`${dir}/${n}`);
      return `${n}:${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
    })
    .join('|');
}

/**
 * The check an open performs: sizes always; checksums the first time this process adopts the build
 * (or always with `checksums: 'always'`).
 */
export function checkBuildForOpen(dir: string, checksums: 'always' | 'first-open', expectedHash?: string): BuildCheck {
  const quick = checkBuild(dir, { checksums: false, expectedHash });
  if (quick.legacy !== null) return quick;
  const identity = fileIdentity(dir, quick.manifest);
  if (checksums === 'first-open' && adopted.get(dir) === identity) return quick;
  const full = checkBuild(dir, { checksums: true, expectedHash });
  adopted.set(dir, identity);
  return full;
}
