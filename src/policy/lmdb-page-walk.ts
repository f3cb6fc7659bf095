/**
 * @module Every page an LMDB file's newest meta page reaches, checked the way LMDB lays it out, read with
 * plain file reads: damage becomes a sentence here, never a SIGBUS or a wild read in the memory map.
 *
 * LMDB keeps no checksums, and a reader trusts every page it is led to: a garbage branch page sends it
 * past the map (SIGBUS, SIGSEGV), to a page that does not exist (MDB_PAGE_NOTFOUND) or, worse, to
 * another valid page whose records it then returns as if they were the asked-for ones. So the walk
 * checks what the format does let one check, on the free-page database, the main one and every named
 * database it lists:
 *
 * - each page carries its own number, a type fitting where it is reached from (branch, leaf, overflow)
 *   and bounds inside the page; no page is reached twice, none past the last page, none the free list
 *   names;
 * - the nodes of a page lie inside it and fill the space from its upper bound to its end exactly, as
 *   LMDB always leaves them; their flags are ones these databases use;
 * - keys ascend within each page and stay inside the range their parent's separators give;
 * - every leaf is at the tree's depth, and the page and entry counts equal the database record's.
 *
 * Values of the named databases are not read here (their encoding is the stores'): lmdb-deep-read.ts
 * reads them through LMDB once this walk has passed. Layout (LMDB of lmdb-js 3, 64-bit pgno_t): a 24-byte
 * page header (pgno u64, txnid u64, pad u16, flags u16, lower u16, upper u16; an overflow page's count
 * u32 in place of lower/upper); lower, upper and the node offsets count from the end of the header; a
 * node is lo u16, hi u16, flags u16, ksize u16, then the key, then the data (or, for a big value, its
 * overflow pages' first page number, txnid and count); a database record (`MDB_db`) is pad u32, flags
 * u16, depth u16, branch, leaf, overflow pages, entries and root, u64 each. The free list's entries are
 * a slot count, then page numbers, holes (0) and runs (-k, then the run's first page).
 *
 * What no walk can see: bytes changed inside a key or value where the layout stays sound. lmdb-deep-read.ts
 * decodes every value and encodes it again, which catches most of those; a changed character inside a
 * string can pass.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

const HEADER = 24;
const NODE_HEADER = 8;
const DB_RECORD = 48;
/** A big value's node holds `MDB_ovpage` in its place: the first page, its txnid and the page count, u64 each. */
const OVERFLOW_REF = 24;
/** Offsets in a meta page: mm_mapsize, the free-page database's record, the main one's, mm_last_pg, mm_txnid. */
const META = { mapSize: 40, freeDb: 48, mainDb: 96, lastPage: 144, txnid: 152 } as const;
const P = { branch: 0x01, leaf: 0x02, overflow: 0x04 } as const;
const F = { bigData: 0x01, subData: 0x02, dupData: 0x04 } as const;
const INTEGER_KEY = 0x08;
const NO_PAGE = 0xffffffffffffffffn;
/** Flags a database record of these stores may carry (lmdb-js's version flag 0x100 included). */
const KNOWN_DB_FLAGS = INTEGER_KEY | 0x100;
/** Deeper than any B-tree a file that fits a 64-bit address space can hold. */
const MAX_DEPTH = 32;

interface DbRecord {
  readonly flags: number;
  readonly depth: number;
  readonly branchPages: bigint;
  readonly leafPages: bigint;
  readonly overflowPages: bigint;
  readonly entries: bigint;
  readonly root: bigint;
}

/** What a sound file holds: the entries of each named database, and the pages reached. */
export interface WalkSummary {
  readonly databases: Readonly<Record<string, number>>;
  readonly pages: number;
  /** The transaction id of the meta page walked from. */
  readonly txnid: bigint;
  /** Pages of the file the free list names: nothing reads them, and LMDB overwrites one whole to reuse it. */
  readonly freePages: readonly number[];
}

class Damage extends Error {}

function damaged(what: string): never {
  throw new Damage(what);
}

function dbRecord(b: Buffer, at: number): DbRecord {
  return {
    flags: b.readUInt16LE(at + 4),
    depth: b.readUInt16LE(at + 6),
    branchPages: b.readBigUInt64LE(at + 8),
    leafPages: b.readBigUInt64LE(at + 16),
    overflowPages: b.readBigUInt64LE(at + 24),
    entries: b.readBigUInt64LE(at + 32),
    root: b.readBigUInt64LE(at + 40),
  };
}

/** Key order as lmdb-js's comparator gives it: bytes, except where one key is a prefix of the other. */
function ordered(a: Buffer, b: Buffer, integer: boolean): 'before' | 'after' | 'same' | 'unknown' {
  if (integer) {
    if (a.length !== b.length || (a.length !== 4 && a.length !== 8)) return 'unknown';
    const x = a.length === 8 ? a.readBigUInt64LE(0) : BigInt(a.readUInt32LE(0));
    const y = b.length === 8 ? b.readBigUInt64LE(0) : BigInt(b.readUInt32LE(0));
    return x < y ? 'before' : x > y ? 'after' : 'same';
  }
  const n = Math.min(a.length, b.length);
  const c = Buffer.compare(a.subarray(0, n), b.subarray(0, n));
  if (c !== 0) return c < 0 ? 'before' : 'after';
  // lmdb-js compares a shorter key past its end (ordered-binary.cpp): the order of a prefix is its own.
  return a.length === b.length ? 'same' : 'unknown';
}

class Walker {
  readonly #fd: number;
  readonly #pageSize: number;
  /** Pages 0 .. pageCount-1 exist (the meta page's last page + 1). */
  readonly #pageCount: number;
  readonly #reached: Uint8Array;
  pages = 0;

  constructor(fd: number, pageSize: number, pageCount: number) {
    this.#fd = fd;
    this.#pageSize = pageSize;
    this.#pageCount = pageCount;
    this.#reached = new Uint8Array(pageCount);
  }

  #read(pgno: number, count = 1): Buffer {
    const b = Buffer.alloc(this.#pageSize * count);
    const got = readSync(this.#fd, b, 0, b.length, pgno * this.#pageSize);
    if (got !== b.length) damaged(`page ${pgno} lies past the end of the file`);
    return b;
  }

  #claim(pgno: number, what: string): void {
    if (pgno < 2 || pgno >= this.#pageCount) damaged(`${what} points at page ${pgno}, outside pages 2..${this.#pageCount - 1}`);
    if (this.#reached[pgno] !== 0) damaged(`page ${pgno} is reached twice (${what})`);
    this.#reached[pgno] = 1;
    this.pages++;
  }

  #pgno(value: bigint, what: string): number {
    if (value >= BigInt(this.#pageCount)) damaged(`${what} points at page ${value}, past the last page ${this.#pageCount - 1}`);
    return Number(value);
  }

  /** The value bytes of the overflow pages a big value's node refers to (`ref`, its MDB_ovpage), which it claims. */
  overflow(ref: Buffer, size: number, what: string): Buffer {
    const first = this.#pgno(ref.readBigUInt64LE(0), what);
    const count = Math.ceil((HEADER + size) / this.#pageSize);
    if (ref.readBigUInt64LE(16) !== BigInt(count)) damaged(`${what}: a ${size}-byte value gives ${ref.readBigUInt64LE(16)} overflow pages`);
    if (first + count > this.#pageCount) damaged(`${what}: its ${count} overflow pages run past the last page`);
    const b = this.#read(first, count);
    if (b.readBigUInt64LE(0) !== BigInt(first)) damaged(`overflow page ${first} carries another page's number`);
    if (b.readUInt16LE(18) !== P.overflow) damaged(`overflow page ${first} is not marked as one`);
    if (b.readUInt32LE(20) !== count) damaged(`overflow page ${first} gives ${b.readUInt32LE(20)} pages for a ${size}-byte value`);
    for (let i = 0; i < count; i++) this.#claim(first + i, what);
    return b.subarray(HEADER, HEADER + size);
  }

  /**
   * Walks one database; `onLeaf` sees each leaf node's key, flags and data (the inline bytes, or the
   * overflow pgno for a big value) and returns how many overflow pages it claimed.
   */
  tree(
    name: string,
    db: DbRecord,
    onLeaf: (key: Buffer, flags: number, data: Buffer, dataSize: number) => number,
    integerKeys = (db.flags & INTEGER_KEY) !== 0,
  ): void {
    if (db.root === NO_PAGE) {
      if (db.entries !== 0n || db.depth !== 0) damaged(`${name} has no root but ${db.entries} entries`);
      return;
    }
    if (!integerKeys && (db.flags & ~KNOWN_DB_FLAGS) !== 0) damaged(`${name} carries unknown flags ${db.flags.toString(16)}`);
    if (db.depth < 1 || db.depth > MAX_DEPTH) damaged(`${name} gives an impossible depth ${db.depth}`);
    const integer = integerKeys;
    const counts = { branch: 0n, leaf: 0n, overflow: 0n, entries: 0n };
    const visit = (pgno: number, level: number, low: Buffer | null, high: Buffer | null): void => {
      const where = `page ${pgno} of ${name}`;
      this.#claim(pgno, name);
      const p = this.#read(pgno);
      if (p.readBigUInt64LE(0) !== BigInt(pgno)) damaged(`${where} carries another page's number`);
      const flags = p.readUInt16LE(18);
      const leaf = level === db.depth;
      if (flags !== (leaf ? P.leaf : P.branch)) damaged(`${where} is not the ${leaf ? 'leaf' : 'branch'} page the tree leads to`);
      const lower = p.readUInt16LE(20);
      const upper = p.readUInt16LE(22);
      const n = lower >> 1;
      if (lower % 2 !== 0 || n === 0 || HEADER + upper > this.#pageSize || lower > upper) damaged(`${where} has impossible bounds`);
      const spans: Array<[number, number]> = [];
      let previous: Buffer | null = null;
      for (let i = 0; i < n; i++) {
        const at = HEADER + p.readUInt16LE(HEADER + 2 * i);
        if (at < HEADER + upper || at + NODE_HEADER > this.#pageSize) damaged(`${where}: node ${i} lies outside the page's nodes`);
        const lo = p.readUInt16LE(at);
        const hi = p.readUInt16LE(at + 2);
        const nodeFlags = p.readUInt16LE(at + 4);
        const keySize = p.readUInt16LE(at + 6);
        const dataSize = lo | (hi << 16);
        const inline = leaf ? ((nodeFlags & F.bigData) !== 0 ? OVERFLOW_REF : dataSize) : 0;
        const end = at + NODE_HEADER + keySize + inline;
        if (end > this.#pageSize) damaged(`${where}: node ${i} runs past the page`);
        spans.push([at, at + NODE_HEADER + keySize + inline + ((keySize + inline) % 2)]);
        const key = p.subarray(at + NODE_HEADER, at + NODE_HEADER + keySize);
        // A branch page's first key is implicit (LMDB leaves it empty): the parent's bound stands for it.
        if (leaf || i > 0) {
          const bound = previous ?? low;
          const order = bound === null ? 'before' : ordered(bound, key, integer);
          if (order === 'after' || (order === 'same' && previous !== null)) damaged(`${where}: keys out of order`);
          if (high !== null && ordered(key, high, integer) !== 'before' && ordered(key, high, integer) !== 'unknown')
            damaged(`${where}: a key beyond its parent's range`);
          previous = key;
        }
        if (leaf) {
          if ((nodeFlags & ~(F.bigData | F.subData)) !== 0 || nodeFlags === (F.bigData | F.subData))
            damaged(`${where}: node ${i} carries unknown flags ${nodeFlags.toString(16)}`);
          counts.entries++;
          counts.overflow += BigInt(onLeaf(Buffer.from(key), nodeFlags, p.subarray(end - inline, end), dataSize));
        } else {
          if (level + 1 > db.depth) damaged(`${where} is a branch below the tree's depth`);
          const child = this.#pgno(BigInt(lo) | (BigInt(hi) << 16n) | (BigInt(nodeFlags) << 32n), where);
          const nextKey = i + 1 < n ? this.#branchKey(p, i + 1, where) : high;
          visit(child, level + 1, i === 0 ? low : Buffer.from(key), nextKey === null ? null : Buffer.from(nextKey));
        }
      }
      spans.sort((a, b) => a[0] - b[0]);
      let at = HEADER + upper;
      for (const [start, end] of spans) {
        if (start !== at) damaged(`${where}: its nodes do not fill the page's node space`);
        at = end;
      }
      if (at !== this.#pageSize) damaged(`${where}: its nodes do not fill the page's node space`);
      if (leaf) counts.leaf++;
      else counts.branch++;
    };
    visit(this.#pgno(db.root, `the root of ${name}`), 1, null, null);
    if (counts.entries !== db.entries) damaged(`${name} holds ${counts.entries} entries, its record says ${db.entries}`);
    if (counts.branch !== db.branchPages || counts.leaf !== db.leafPages || counts.overflow !== db.overflowPages)
      damaged(`${name}'s page counts differ from its record`);
  }

  #branchKey(p: Buffer, i: number, where: string): Buffer {
    const at = HEADER + p.readUInt16LE(HEADER + 2 * i);
    if (at + NODE_HEADER > this.#pageSize) damaged(`${where}: node ${i} lies outside the page`);
    const keySize = p.readUInt16LE(at + 6);
    if (at + NODE_HEADER + keySize > this.#pageSize) damaged(`${where}: node ${i} runs past the page`);
    return p.subarray(at + NODE_HEADER, at + NODE_HEADER + keySize);
  }

  /**
   * Runs of pages [first, first + count) the free list names must be pages no database reaches; returns
   * those inside the file.
   */
  assertFree(runs: ReadonlyArray<readonly [bigint, bigint]>, mapPages: number): number[] {
    const inFile: number[] = [];
    for (const [first, count] of runs) {
      // LMDB may list pages past its last page as free (the file then ends before them), never past the map.
      if (first < 2n || count < 1n || first + count > BigInt(mapPages))
        damaged(`the free list names pages outside the map's ${mapPages} pages`);
      for (let pgno = Number(first); pgno < Math.min(Number(first + count), this.#pageCount); pgno++) {
        if (this.#reached[pgno] !== 0) damaged(`page ${pgno} is both free and in use`);
        inFile.push(pgno);
      }
    }
    return inFile;
  }
}

/** The newer of the two meta pages of an open file, and the page size. */
function newestMeta(fd: number): { meta: Buffer; pageSize: number } {
  const read = (offset: number): Buffer => {
    const b = Buffer.alloc(META.txnid + 8);
    readSync(fd, b, 0, b.length, offset);
    return b;
  };
  const first = read(0);
  const pageSize = first.readUInt32LE(META.freeDb);
  const second = read(pageSize);
  return { meta: second.readBigUInt64LE(META.txnid) > first.readBigUInt64LE(META.txnid) ? second : first, pageSize };
}

/** The transaction id of the file's newest meta page: the snapshot a reader beginning now gets. */
export function newestTxnid(path: string): bigint {
  const fd = openSync(path, 'r');
  try {
    return newestMeta(fd).meta.readBigUInt64LE(META.txnid);
  } finally {
    closeSync(fd);
  }
}

/**
 * Walks the file at `path` from its newest meta page (which lmdb-file-check.ts has vetted); returns the
 * entries of each named database, or why the file is damaged. Reads only: it never maps the file.
 */
export function walkLmdbFile(path: string): WalkSummary | string {
  const fd = openSync(path, 'r');
  try {
    const { meta: m, pageSize } = newestMeta(fd);
    const pageCount = Number(m.readBigUInt64LE(META.lastPage)) + 1;
    if (pageCount * pageSize > statSync(path).size) return 'it is truncated';
    const walker = new Walker(fd, pageSize, pageCount);
    const free: Array<[bigint, bigint]> = [];
    walker.tree(
      'the free-page list',
      dbRecord(m, META.freeDb),
      (key, flags, data, size) => {
        const ids = (flags & F.bigData) !== 0 ? walker.overflow(data, size, 'the free-page list') : data;
        // An entry is a count of slots, then the slots: a page number, 0 (a hole: LMDB reserves more than it
        // fills) or -k followed by the first of a run of k pages.
        if (key.length !== 8 || ids.length < 8 || ids.length % 8 !== 0 || ids.readBigUInt64LE(0) > BigInt(ids.length / 8 - 1))
          damaged('an entry of the free-page list is malformed');
        const n = Number(ids.readBigUInt64LE(0));
        for (let i = 1; i <= n; i++) {
          const slot = ids.readBigInt64LE(8 * i);
          if (slot === 0n) continue;
          if (slot > 0n) {
            free.push([slot, 1n]);
            continue;
          }
          if (i === n) damaged('an entry of the free-page list ends inside a run of pages');
          i++;
          free.push([ids.readBigInt64LE(8 * i), -slot]);
        }
        return (flags & F.bigData) !== 0 ? Math.ceil((HEADER + size) / pageSize) : 0;
        // The free list's record holds the environment's flags in place of its own: its keys are transaction ids.
      },
      true,
    );
    const named: Array<[string, DbRecord]> = [];
    walker.tree('the database list', dbRecord(m, META.mainDb), (key, flags, data, size) => {
      if ((flags & F.subData) === 0) {
        // lmdb-js keeps nothing but databases here; a plain value would still be a value.
        if ((flags & F.bigData) === 0) return 0;
        walker.overflow(data, size, 'the database list');
        return Math.ceil((HEADER + size) / pageSize);
      }
      if (size !== DB_RECORD) damaged('a database record of the database list has the wrong size');
      named.push([key.toString('latin1').replace(/\0$/, ''), dbRecord(data, 0)]);
      return 0;
    });
    const databases: Record<string, number> = {};
    for (const [name, db] of named) {
      walker.tree(`database ${name}`, db, (_key, flags, data, size) => {
        if ((flags & F.subData) !== 0) damaged(`database ${name} holds a nested database`);
        if ((flags & F.bigData) === 0) return 0;
        walker.overflow(data, size, `database ${name}`);
        return Math.ceil((HEADER + size) / pageSize);
      });
      databases[name] = Number(db.entries);
    }
    const freePages = walker.assertFree(free, Number(m.readBigUInt64LE(META.mapSize) / BigInt(pageSize)));
    return { databases, pages: walker.pages, txnid: m.readBigUInt64LE(META.txnid), freePages };
  } catch (err) {
    if (err instanceof Damage) return err.message;
    throw err;
  } finally {
    closeSync(fd);
  }
}
