/**
 * @module Minimal ZIP reader for CMS distributions.
 *
 * CMS ships each public use file as a .zip holding one CSV whose member name changes between years, and the
 * compiler must stream it (hundreds of MB inflated) without a dependency or a temporary copy. Only what those
 * archives need is supported: the central directory (found from the end-of-central-directory record, ZIP64
 * included), stored or deflated members, no encryption, no multi-volume archives.
 *
 * Sizes and CRC come from the central directory, which is authoritative even when a writer used data descriptors
 * (zeros in the local header). The inflated bytes are checked against both, so a truncated or corrupt download
 * fails the build instead of yielding a silently short table.
 *
 * Why not yauzl (3.4.0, well kept): measured on the real PUFs by `bench/zip-reader.bench.ts`
 * (2026-11, shared 2-core machine, process CPU per full read of the member), yauzl as documented takes 116 ms for
 * the PY2025 Plan Attributes PUF (35.5 MB inflated) and 208 ms for PY2023 (47.3 MB), against 48 and 60 ms here;
 * even its raw member bytes through our 64 KiB inflate take 60 and 76 ms (+25 %). And yauzl checks sizes, not the
 * CRC-32: one flipped byte in the deflate data of the PY2025 file read to the end without an error, where this
 * reader fails with "CRC-32 mismatch". A wrapper adding the CRC check, the choice of the CSV member and the
 * FatalBuildError mapping would keep half of this file for a slower read, so the reader stays.
 */
import fs from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import { DIAGNOSTIC_CODES, FatalBuildError } from './diagnostics.ts';

export interface ZipCsv {
  /** Name of the CSV member inside the archive, e.g. `Plan_Attributes_PUF.csv`. */
  readonly memberName: string;
  readonly uncompressedSize: number;
  readonly compressedSize: number;
  /** The member's inflated bytes; errors with FatalBuildError (badFormat) on corrupt data, size or CRC mismatch. */
  readonly stream: NodeJS.ReadableStream & AsyncIterable<Buffer>;
}

const SIGNATURE = {
  endOfCentralDirectory: 0x06054b50,
  zip64EndOfCentralDirectory: 0x06064b50,
  zip64Locator: 0x07064b50,
  centralDirectory: 0x02014b50,
  localHeader: 0x04034b50,
} as const;

const METHOD = { stored: 0, deflated: 8 } as const;

/** Names of methods an archiver might pick, so the error says what the operator should re-pack away from. */
const METHOD_NAMES: Readonly<Record<number, string>> = {
  9: 'Deflate64',
  12: 'BZIP2',
  14: 'LZMA',
  93: 'Zstandard',
  95: 'XZ',
  98: 'PPMd',
  99: 'AES encryption',
};

const FLAG = {
  encrypted: 0x0001,
  strongEncryption: 0x0040,
  utf8Names: 0x0800,
} as const;

const EOCD_SIZE = 22;
const ZIP64_LOCATOR_SIZE = 20;
const ZIP64_EOCD_SIZE = 56;
const CENTRAL_HEADER_SIZE = 46;
const LOCAL_HEADER_SIZE = 30;
const MAX_COMMENT = 0xffff;
const ZIP64_EXTRA_ID = 0x0001;
const U16_SATURATED = 0xffff;
const U32_SATURATED = 0xffffffff;
/** Chunk size of reads and of inflated output: big enough to amortise per-chunk costs, small enough to die young. */
const CHUNK = 1 << 16;
/** Names listed in an error before it says "and N more". */
const MAX_NAMES_IN_ERROR = 20;

interface CentralEntry {
  readonly name: string;
  readonly flags: number;
  readonly method: number;
  readonly crc: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly localHeaderOffset: number;
}

/**
 * Opens the single `.csv` member of a zip archive for streaming.
 * Directories and `__MACOSX/` resource forks are ignored; any other count of `.csv` members than one is an error.
 * @throws FatalBuildError inputMissing when the file does not exist; badFormat when it is not a readable zip,
 *   has no or several CSV members, or the member is encrypted or uses a method other than stored/deflate.
 * @example
 * const { memberName, stream } = await openZipCsv('cms/py2025/plan-attributes-puf.zip');
 * for await (const chunk of stream) process.stdout.write(chunk);
 */
export async function openZipCsv(path: string, member?: RegExp): Promise<ZipCsv> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) throw new FatalBuildError(DIAGNOSTIC_CODES.inputMissing, `${path}: file not found`);
    throw err;
  }
  let entry: CentralEntry;
  let dataStart: number;
  try {
    const size = (await fh.stat()).size;
    const entries = await readCentralDirectory(fh, size, path);
    entry = pickCsv(entries, path, member);
    checkSupported(entry, path);
    const local = await readAt(fh, entry.localHeaderOffset, LOCAL_HEADER_SIZE, size, path);
    if (local.readUInt32LE(0) !== SIGNATURE.localHeader) {
      throw bad(path, `member ${entry.name}: no local header at offset ${entry.localHeaderOffset}`);
    }
    dataStart = entry.localHeaderOffset + LOCAL_HEADER_SIZE + local.readUInt16LE(26) + local.readUInt16LE(28);
    if (dataStart + entry.compressedSize > size) {
      throw bad(path, `member ${entry.name}: data runs past the end of the file (truncated download?)`);
    }
  } finally {
    await fh.close();
  }
  return {
    memberName: entry.name,
    uncompressedSize: entry.uncompressedSize,
    compressedSize: entry.compressedSize,
    stream: memberStream(path, entry, dataStart),
  };
}

async function readCentralDirectory(fh: FileHandle, size: number, path: string): Promise<CentralEntry[]> {
  if (size < EOCD_SIZE) throw bad(path, 'not a zip file (too short)');
  const tailLength = Math.min(size, EOCD_SIZE + MAX_COMMENT);
  const tailStart = size - tailLength;
  const tail = await readAt(fh, tailStart, tailLength, size, path);
  // The record sits before a comment of up to 64 KiB, so it is searched backwards from the last possible place.
  let eocd = -1;
  for (let p = tailLength - EOCD_SIZE; p >= 0; p--) {
    if (tail.readUInt32LE(p) === SIGNATURE.endOfCentralDirectory && p + EOCD_SIZE + tail.readUInt16LE(p + 20) <= tailLength) {
      eocd = p;
      break;
    }
  }
  if (eocd < 0) throw bad(path, 'not a zip file, or a truncated one (no end-of-central-directory record)');

  const disk = tail.readUInt16LE(eocd + 4);
  const cdDisk = tail.readUInt16LE(eocd + 6);
  let count: number = tail.readUInt16LE(eocd + 10);
  let cdSize: number = tail.readUInt32LE(eocd + 12);
  let cdOffset: number = tail.readUInt32LE(eocd + 16);
  const eocdOffset = tailStart + eocd;

  const locatorOffset = eocdOffset - ZIP64_LOCATOR_SIZE;
  const hasLocator = locatorOffset >= 0 && (await readAt(fh, locatorOffset, 4, size, path)).readUInt32LE(0) === SIGNATURE.zip64Locator;
  if (hasLocator) {
    const locator = await readAt(fh, locatorOffset, ZIP64_LOCATOR_SIZE, size, path);
    const recordOffset = u64(locator, 8, path);
    const record = await readAt(fh, recordOffset, ZIP64_EOCD_SIZE, size, path);
    if (record.readUInt32LE(0) !== SIGNATURE.zip64EndOfCentralDirectory) {
      throw bad(path, 'ZIP64 locator points to no ZIP64 end-of-central-directory record');
    }
    if (record.readUInt32LE(16) !== 0 || record.readUInt32LE(20) !== 0) {
      throw bad(path, 'multi-volume zip archives are not supported');
    }
    count = u64(record, 32, path);
    cdSize = u64(record, 40, path);
    cdOffset = u64(record, 48, path);
  } else {
    if (disk !== 0 || cdDisk !== 0) throw bad(path, 'multi-volume zip archives are not supported');
    if (count === U16_SATURATED || cdSize === U32_SATURATED || cdOffset === U32_SATURATED) {
      throw bad(path, 'ZIP64 archive without a ZIP64 end-of-central-directory locator');
    }
  }
  if (cdOffset + cdSize > size) throw bad(path, 'central directory runs past the end of the file (truncated download?)');

  const cd = await readAt(fh, cdOffset, cdSize, size, path);
  const entries: CentralEntry[] = [];
  let p = 0;
  for (let k = 0; k < count; k++) {
    if (p + CENTRAL_HEADER_SIZE > cd.length || cd.readUInt32LE(p) !== SIGNATURE.centralDirectory) {
      throw bad(path, `central directory entry ${k + 1} of ${count} is damaged`);
    }
    const flags = cd.readUInt16LE(p + 8);
    const nameLength = cd.readUInt16LE(p + 28);
    const extraLength = cd.readUInt16LE(p + 30);
    const commentLength = cd.readUInt16LE(p + 32);
    const next = p + CENTRAL_HEADER_SIZE + nameLength + extraLength + commentLength;
    if (next > cd.length) throw bad(path, `central directory entry ${k + 1} of ${count} is damaged`);
    const nameBytes = cd.subarray(p + CENTRAL_HEADER_SIZE, p + CENTRAL_HEADER_SIZE + nameLength);
    let uncompressedSize: number = cd.readUInt32LE(p + 24);
    let compressedSize: number = cd.readUInt32LE(p + 20);
    let localHeaderOffset: number = cd.readUInt32LE(p + 42);
    if (uncompressedSize === U32_SATURATED || compressedSize === U32_SATURATED || localHeaderOffset === U32_SATURATED) {
      // The ZIP64 extra field holds, in this order, only the values saturated in the fixed header.
      const extra = cd.subarray(p + CENTRAL_HEADER_SIZE + nameLength, p + CENTRAL_HEADER_SIZE + nameLength + extraLength);
      const z = findExtra(extra, ZIP64_EXTRA_ID);
      const name = decodeName(nameBytes, flags);
      if (z === null) throw bad(path, `member ${name}: ZIP64 sizes without a ZIP64 extra field`);
      let q = 0;
      const take = (): number => {
        if (q + 8 > z.length) throw bad(path, `member ${name}: ZIP64 extra field too short`);
        const v = u64(z, q, path);
        q += 8;
        return v;
      };
      if (uncompressedSize === U32_SATURATED) uncompressedSize = take();
      if (compressedSize === U32_SATURATED) compressedSize = take();
      if (localHeaderOffset === U32_SATURATED) localHeaderOffset = take();
    }
    entries.push({
      name: decodeName(nameBytes, flags),
      flags,
      method: cd.readUInt16LE(p + 10),
      crc: cd.readUInt32LE(p + 16),
      compressedSize,
      uncompressedSize,
      localHeaderOffset,
    });
    p = next;
  }
  return entries;
}

/**
 * The CSV member to read: the only one, or with `member`, the only one whose name matches it (a CMS
 * state-based-exchange bundle is one zip of six CSVs: `CTPlans05102024.csv`, `CTRates05102024.csv`…).
 */
function pickCsv(entries: readonly CentralEntry[], path: string, member?: RegExp): CentralEntry {
  const files = entries.filter((e) => !isDirectory(e.name) && !isMacResourceFork(e.name));
  const allCsv = files.filter((e) => e.name.toLowerCase().endsWith('.csv'));
  const csv = member === undefined ? allCsv : allCsv.filter((e) => member.test(e.name.split('/').at(-1)!));
  const what = member === undefined ? 'one .csv member' : `one .csv member matching ${member}`;
  if (csv.length === 1) return csv[0]!;
  if (csv.length === 0) {
    throw bad(path, `expected ${what}, found none (members: ${nameList(files.map((e) => e.name))})`);
  }
  throw bad(path, `expected ${what}, found ${csv.length}: ${nameList(csv.map((e) => e.name))}`);
}

function checkSupported(entry: CentralEntry, path: string): void {
  if ((entry.flags & (FLAG.encrypted | FLAG.strongEncryption)) !== 0 || entry.method === 99) {
    throw bad(path, `member ${entry.name} is encrypted; re-download the unencrypted CMS file`);
  }
  if (entry.method !== METHOD.stored && entry.method !== METHOD.deflated) {
    const what = METHOD_NAMES[entry.method] ?? 'unknown';
    throw bad(
      path,
      `member ${entry.name} uses compression method ${entry.method} (${what}); only stored (0) and deflate (8) are supported`,
    );
  }
  if (entry.method === METHOD.stored && entry.compressedSize !== entry.uncompressedSize) {
    const sizes = `${entry.compressedSize} vs ${entry.uncompressedSize}`;
    throw bad(path, `member ${entry.name} is stored but its sizes differ (${sizes})`);
  }
}

/**
 * Verifies the inflated bytes against the central directory. It also maps errors of the upstream file and
 * inflate streams onto itself, so a consumer iterating this one stream sees every failure as a FatalBuildError.
 */
class CheckedMember extends Transform {
  private crc = 0;
  private size = 0;
  private readonly entry: CentralEntry;
  private readonly path: string;

  constructor(entry: CentralEntry, path: string) {
    super({ highWaterMark: CHUNK });
    this.entry = entry;
    this.path = path;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.entry.uncompressedSize) {
      const { name, uncompressedSize } = this.entry;
      callback(bad(this.path, `member ${name} inflates to more than its recorded ${uncompressedSize} bytes`));
      return;
    }
    this.crc = zlib.crc32(chunk, this.crc);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const { name, uncompressedSize } = this.entry;
    if (this.size !== uncompressedSize) {
      const reason = `member ${name} inflated to ${this.size} bytes, expected ${uncompressedSize} (corrupt or truncated download?)`;
      callback(bad(this.path, reason));
      return;
    }
    if (this.crc >>> 0 !== this.entry.crc >>> 0) {
      callback(bad(this.path, `member ${name}: CRC-32 mismatch (corrupt download?)`));
      return;
    }
    callback();
  }
}

function memberStream(path: string, entry: CentralEntry, dataStart: number): CheckedMember {
  const checked = new CheckedMember(entry, path);
  if (entry.compressedSize === 0) {
    // createReadStream cannot express an empty range; an empty stored member is simply no bytes.
    checked.end();
    return checked;
  }
  const source = fs.createReadStream(path, {
    start: dataStart,
    end: dataStart + entry.compressedSize - 1,
    highWaterMark: CHUNK,
  });
  source.on('error', (err) => checked.destroy(bad(path, `member ${entry.name}: read failed: ${err.message}`)));
  let upstream: NodeJS.ReadableStream = source;
  if (entry.method === METHOD.deflated) {
    const inflate = zlib.createInflateRaw({ chunkSize: CHUNK });
    inflate.on('error', (err) => checked.destroy(bad(path, `member ${entry.name}: corrupt deflate data (${err.message})`)));
    checked.on('close', () => inflate.destroy());
    upstream = source.pipe(inflate);
  }
  // A consumer that stops early (break out of for await) destroys `checked`; the file must be closed then too.
  checked.on('close', () => source.destroy());
  upstream.pipe(checked);
  return checked;
}

async function readAt(fh: FileHandle, position: number, length: number, size: number, path: string): Promise<Buffer> {
  if (position < 0 || position + length > size) throw bad(path, 'truncated zip file (a record points past the end)');
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) throw bad(path, 'truncated zip file (unexpected end of file)');
    done += bytesRead;
  }
  return buf;
}

function u64(buf: Buffer, offset: number, path: string): number {
  const v = buf.readBigUInt64LE(offset);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(path, 'ZIP64 value out of range');
  return Number(v);
}

function findExtra(extra: Buffer, id: number): Buffer | null {
  let p = 0;
  while (p + 4 <= extra.length) {
    const headerId = extra.readUInt16LE(p);
    const length = extra.readUInt16LE(p + 2);
    if (p + 4 + length > extra.length) return null;
    if (headerId === id) return extra.subarray(p + 4, p + 4 + length);
    p += 4 + length;
  }
  return null;
}

const UTF8_STRICT = new TextDecoder('utf-8', { fatal: true });

/** Names are UTF-8 when flagged, and in practice often UTF-8 unflagged (macOS); otherwise legacy 8-bit. */
function decodeName(bytes: Buffer, flags: number): string {
  if ((flags & FLAG.utf8Names) !== 0) return bytes.toString('utf8');
  try {
    return UTF8_STRICT.decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

function isDirectory(name: string): boolean {
  return name.endsWith('/') || name.endsWith('\\');
}

function isMacResourceFork(name: string): boolean {
  return name.startsWith('__MACOSX/') || name.includes('/__MACOSX/');
}

function nameList(names: readonly string[]): string {
  if (names.length === 0) return 'none';
  const shown = names.slice(0, MAX_NAMES_IN_ERROR).join(', ');
  return names.length > MAX_NAMES_IN_ERROR ? `${shown} and ${names.length - MAX_NAMES_IN_ERROR} more` : shown;
}

function bad(path: string, reason: string): FatalBuildError {
  return new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `${path}: ${reason}`);
}

function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
