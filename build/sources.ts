/**
 * @module Resolution of build inputs.
 *
 * Each plan year lists its inputs in `data/sources/<year>.json` with the official URL and, where known,
 * the expected sha256. An input is taken from, in order: the path given on the command line, a local
 * mirror (the shared data folder), a file downloaded earlier into the cache, a download from the
 * official URL. The order puts operator intent first and the network last, so an offline machine with
 * the mirror builds without ever touching the network.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable, Transform } from 'node:stream';
import { DIAGNOSTIC_CODES, FatalBuildError } from './read/diagnostics.ts';
import type { ProgressSink } from './progress.ts';
import type { ManifestInput } from '../src/engine/manifest.ts';

export interface MirrorSpec {
  readonly path: string;
  readonly sha256?: string;
}

export interface InputSpec {
  readonly title: string;
  readonly required: boolean;
  readonly home?: string;
  readonly url: string | null;
  readonly url_sha256: string | null;
  readonly mirrors: readonly MirrorSpec[];
  /**
   * Plan inputs of a state-based-exchange bundle (see plan-sources.ts): which file of the bundle this
   * is. Absent: the input named `plan_attributes`, `service_area` or `rates` is that file of the
   * federal PUFs.
   */
  readonly role?: PlanRole;
  /** The bundle the file belongs to, e.g. `sbe-CT`; absent: `federal`. */
  readonly bundle?: string;
  /** Column dialect of the file (`sbe`); absent: the federal headers. */
  readonly dialect?: 'sbe';
  /** In a zip of several CSVs (a CMS SBE bundle as distributed), a pattern naming the member to read. */
  readonly member?: string;
}

/** The plan files a source of plan data provides. */
export type PlanRole = 'plan_attributes' | 'service_area' | 'rates';

export interface SourcesFile {
  readonly year: number;
  readonly description?: string;
  readonly inputs: Readonly<Record<string, InputSpec>>;
}

/** An input as found: the manifest's description of it (its name, origin and checksum), before reading. */
export interface ResolvedInput extends Pick<ManifestInput, 'name' | 'title' | 'path' | 'origin' | 'url' | 'sha256' | 'bytes'> {
  /** True when an expected checksum was known and matched; null when none was known. */
  readonly checksumVerified: boolean | null;
  /**
   * Name of the file in diagnostics and row counts: its base name, and for one member of a zip of
   * several, `name.zip#<input>` so that each member counts on its own.
   */
  readonly file: string;
}

export interface ResolveOptions {
  /** Repository root: mirror paths are relative to it. */
  readonly root: string;
  /** Where downloads are kept between builds. */
  readonly cacheDir: string;
  /** Paths given on the command line, by input name. */
  readonly overrides: Readonly<Record<string, string>>;
  /** Never use the network. */
  readonly offline: boolean;
  /** Also download optional inputs (they are large: the Rate PUF is ~280 MB unzipped). */
  readonly fetchOptional: boolean;
  readonly progress: ProgressSink;
}

/** Reads and checks `data/sources/<year>.json`. */
export function loadSourcesFile(path: string): SourcesFile {
  if (!existsSync(path)) {
    throw new FatalBuildError(DIAGNOSTIC_CODES.inputMissing, `no sources file ${path}: add one listing the inputs of that plan year`);
  }
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as SourcesFile;
  if (typeof parsed.year !== 'number' || typeof parsed.inputs !== 'object' || parsed.inputs === null) {
    throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `${path}: expected { year, inputs }`);
  }
  for (const [name, spec] of Object.entries(parsed.inputs)) checkPlanFields(path, name, spec);
  return parsed;
}

const PLAN_ROLES: readonly string[] = ['plan_attributes', 'service_area', 'rates'];
const DIALECT_NAMES: readonly string[] = ['sbe'];

/** The fields that place an input in a bundle of plan data must say something the compiler knows. */
function checkPlanFields(path: string, name: string, spec: InputSpec): void {
  const bad = (what: string): never => {
    throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `${path}: input ${name}: ${what}`);
  };
  if (spec.role !== undefined && !PLAN_ROLES.includes(spec.role)) bad(`role must be one of ${PLAN_ROLES.join(', ')}`);
  if (spec.dialect !== undefined && !DIALECT_NAMES.includes(spec.dialect)) bad(`dialect must be one of ${DIALECT_NAMES.join(', ')}`);
  if (spec.bundle !== undefined && spec.role === undefined) bad('an input of a bundle needs a role');
  if (spec.member !== undefined) {
    try {
      new RegExp(spec.member);
    } catch {
      bad(`member is not a regular expression: ${spec.member}`);
    }
  }
}

/** SHA-256 of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/**
 * Resolves every input of the year. Returns the resolved inputs by name; optional inputs that could not
 * be found are absent (the compiler then models premiums or leaves the crosswalk empty, and says so).
 */
export async function resolveInputs(sources: SourcesFile, opts: ResolveOptions): Promise<Map<string, ResolvedInput>> {
  for (const name of Object.keys(opts.overrides)) {
    if (sources.inputs[name] === undefined) {
      throw new FatalBuildError(
        DIAGNOSTIC_CODES.inputMissing,
        `unknown input "${name}"; inputs of ${sources.year}: ${Object.keys(sources.inputs).join(', ')}`,
      );
    }
  }
  const out = new Map<string, ResolvedInput>();
  for (const [name, spec] of Object.entries(sources.inputs)) {
    const resolved = await resolveOne(name, spec, sources.year, opts);
    if (resolved !== null) out.set(name, resolved);
  }
  return out;
}

async function resolveOne(name: string, spec: InputSpec, year: number, opts: ResolveOptions): Promise<ResolvedInput | null> {
  const looked: string[] = [];
  const override = opts.overrides[name];
  if (override !== undefined) {
    const path = isAbsolute(override) ? override : resolve(override);
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new FatalBuildError(DIAGNOSTIC_CODES.inputMissing, `${name}: no file at ${path} (given with --${name.replaceAll('_', '-')})`);
    }
    return finish(name, spec, path, 'command-line', undefined);
  }
  for (const mirror of spec.mirrors) {
    const path = resolve(opts.root, mirror.path);
    looked.push(path);
    if (existsSync(path) && statSync(path).isFile()) return finish(name, spec, path, 'mirror', mirror.sha256);
  }
  const cached = spec.url !== null ? join(opts.cacheDir, String(year), cacheName(spec.url)) : null;
  if (cached !== null) {
    looked.push(cached);
    if (existsSync(cached)) return finish(name, spec, cached, 'cache', spec.url_sha256 ?? undefined);
  }
  const mayDownload = !opts.offline && spec.url !== null && cached !== null && (spec.required || opts.fetchOptional);
  if (mayDownload) {
    try {
      await download(spec.url!, cached!, name, spec.url_sha256 ?? undefined, opts.progress);
      return await finish(name, spec, cached!, 'download', spec.url_sha256 ?? undefined);
    } catch (err) {
      if (err instanceof FatalBuildError) throw err;
      if (spec.required) {
        throw new FatalBuildError(
          DIAGNOSTIC_CODES.inputMissing,
          `${name}: not found (looked in ${looked.join(', ')}) and the download from ${spec.url} failed: ${errorText(err)}`,
        );
      }
      opts.progress.info(
        `${name}: optional input not found and the download from ${spec.url} failed (${errorText(err)}); going on without it`,
      );
      return null;
    }
  }
  if (!spec.required) return null;
  const why = opts.offline ? 'offline' : spec.url === null ? 'no official download URL is known' : 'download not attempted';
  throw new FatalBuildError(
    DIAGNOSTIC_CODES.inputMissing,
    `${name}: required input not found (looked in ${looked.join(', ')}; ${why}); official source: ${spec.url ?? spec.home ?? 'unknown'}` +
      ` — pass it with --${name.replaceAll('_', '-')} PATH`,
  );
}

async function finish(
  name: string,
  spec: InputSpec,
  path: string,
  origin: ResolvedInput['origin'],
  expected: string | undefined,
): Promise<ResolvedInput> {
  const sha256 = await sha256File(path);
  if (expected !== undefined && expected !== sha256) {
    throw new FatalBuildError(
      DIAGNOSTIC_CODES.checksum,
      `${name}: checksum mismatch for ${path}: expected sha256 ${expected}, got ${sha256}`,
    );
  }
  return {
    name,
    title: spec.title,
    path,
    file: spec.member !== undefined && path.toLowerCase().endsWith('.zip') ? `${basename(path)}#${name}` : basename(path),
    origin,
    url: spec.url,
    sha256,
    bytes: statSync(path).size,
    checksumVerified: expected === undefined ? null : true,
  };
}

/** File name of a download in the cache (`<cacheDir>/<year>/<name>`). */
export function cacheName(url: string): string {
  return basename(new URL(url).pathname) || 'download';
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}

/**
 * Downloads to a temporary name and renames only once complete and, when a checksum is known, verified:
 * an interrupted or corrupt download never takes the cache name, so the next build downloads again.
 */
async function download(url: string, dest: string, name: string, expected: string | undefined, progress: ProgressSink): Promise<void> {
  mkdirSync(dirname(dest), { recursive: true });
  const tmp = `${dest}.partial`;
  const res = await fetch(url, { signal: AbortSignal.timeout(30 * 60_000) });
  // Like fetch's own network errors, a reason for resolveInput's catch, which reports it under
  // HPD_BUILD_INPUT_MISSING (or goes on without an optional input).
  if (!res.ok || res.body === null) throw new Error(`HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length') ?? '') || null;
  const stage = progress.stage(`download ${name}`);
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      stage.update(bytes, bytes, total);
      cb(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>), counter, createWriteStream(tmp));
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  stage.end(bytes);
  if (expected !== undefined) {
    const got = await sha256File(tmp);
    if (got !== expected) {
      rmSync(tmp, { force: true });
      throw new FatalBuildError(
        DIAGNOSTIC_CODES.checksum,
        `${name}: checksum mismatch for the download from ${url}: expected sha256 ${expected}, got ${got}`,
      );
    }
  }
  renameSync(tmp, dest);
}
