/**
 * @module The check an LMDB file of the state directory passes before it is mapped.
 *
 * LMDB maps the file and trusts it: a `state.mdb` truncated below its last page killed the process with
 * SIGBUS at the first read that touched the missing part (after `hpd serve` had said it was serving), and
 * overwritten meta pages with SIGSEGV, without a word. A 0-byte file was silently recreated empty, which
 * revoked every API key. The build files are verified by their sums; the files that hold customers'
 * keys and grants are checked here, from the two meta pages LMDB itself starts from:
 *
 * - both carry LMDB's magic and the same page size;
 * - the newer one (higher transaction id) ends, with its last page, inside the file;
 * - the roots of its two core databases lie at or below that last page.
 *
 * Layout (the LMDB of lmdb-js 3: a 24-byte page header, then `MDB_meta`): magic at 24; the page size in
 * the free database's `md_pad` at 48; the main database's root at 136; `mm_last_pg` at 144;
 * `mm_txnid` at 152. A file that does not exist is fine: the store creates it.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { StateError } from './state-error.ts';

const MAGIC = 0xbeefc0de;
const AT = { magic: 24, pageSize: 48, freeRoot: 88, mainRoot: 136, lastPage: 144, txnid: 152 } as const;
const META_BYTES = 160;

interface Meta {
  readonly pageSize: number;
  readonly lastPage: bigint;
  readonly txnid: bigint;
  readonly roots: readonly bigint[];
}

/** The meta page at `offset`, or why it is not one. */
function readMeta(fd: number, offset: number): Meta | string {
  const b = Buffer.alloc(META_BYTES);
  if (readSync(fd, b, 0, META_BYTES, offset) < META_BYTES) return 'ends inside a meta page';
  if (b.readUInt32LE(AT.magic) !== MAGIC) return 'a meta page lacks the LMDB magic number';
  const pageSize = b.readUInt32LE(AT.pageSize);
  if (pageSize < 512 || pageSize > 65_536 || (pageSize & (pageSize - 1)) !== 0)
    return `a meta page gives an impossible page size (${pageSize})`;
  return {
    pageSize,
    lastPage: b.readBigUInt64LE(AT.lastPage),
    txnid: b.readBigUInt64LE(AT.txnid),
    roots: [b.readBigUInt64LE(AT.freeRoot), b.readBigUInt64LE(AT.mainRoot)],
  };
}

/** How long a file found damaged is watched for a writer finishing it, and how often. */
const SETTLE_MS = 600;
const SETTLE_STEP_MS = 50;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Why the LMDB file at `path` must not be opened, or null when it may (or does not exist yet). A
 * store that another process is creating is for a moment empty or shorter than its meta pages say
 * (LMDB creates the file, then writes it): a file found so is watched for a while, and one that
 * changes meanwhile is looked at again. A damaged file at rest does not change.
 */
export function lmdbFileProblem(path: string): string | null {
  let problem = fileProblem(path);
  let seen = fileState(path);
  for (let waited = 0; problem !== null && waited < SETTLE_MS; waited += SETTLE_STEP_MS) {
    Atomics.wait(PAUSE, 0, 0, SETTLE_STEP_MS);
    const now = fileState(path);
    if (now === seen) continue;
    seen = now;
    problem = fileProblem(path);
  }
  return problem;
}

/** The file's size and modification time, to tell whether anything wrote to it. */
function fileState(path: string): string {
  try {
    const st = statSync(path);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return 'absent';
  }
}

function fileProblem(path: string): string | null {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return null;
  }
  if (size === 0) return 'it is empty (0 bytes), which a store that was ever written never is';
  const fd = openSync(path, 'r');
  try {
    const first = readMeta(fd, 0);
    if (typeof first === 'string') return first;
    const second = readMeta(fd, first.pageSize);
    if (typeof second === 'string') return second;
    if (second.pageSize !== first.pageSize) return 'its two meta pages disagree on the page size';
    const meta = second.txnid > first.txnid ? second : first;
    const needed = (meta.lastPage + 1n) * BigInt(meta.pageSize);
    if (BigInt(size) < needed) return `it is truncated: ${size} bytes, but its last page ends at byte ${needed}`;
    const NO_ROOT = 0xffffffffffffffffn; // P_INVALID: an empty database
    if (meta.roots.some((r) => r !== NO_ROOT && r > meta.lastPage)) return 'a database root lies past its last page';
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The StateError every command stops with on a damaged state file; the message says what to do. */
export function damagedStateFile(path: string, problem: string): StateError {
  return new StateError(
    `the state file ${path} is damaged (${problem}); it was not opened. Restore it from a backup (hpd state backup) with hpd stopped, or move it aside to start with an empty store (every API key and grant in it is then lost)`,
  );
}

/**
 * Throws a StateError naming the file when it must not be opened: `hpd serve` and the CLI then stop
 * with that one line instead of dying on a signal, and an existing store is never replaced by an empty one.
 */
export function assertLmdbFileUsable(path: string): void {
  const problem = lmdbFileProblem(path);
  if (problem !== null) throw damagedStateFile(path, problem);
}
