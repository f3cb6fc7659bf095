/**
 * @module The child process that reads every page of one LMDB file of the state directory (spawned by
 * lmdb-deep-check.ts): `node --import bin/register-typescript.js lmdb-deep-read.ts FILE SPEC`, SPEC being
 * the JSON of the file's DatabaseSpec. It prints one JSON line, a DeepReadVerdict, and exits 0.
 *
 * A page LMDB is led to by damage can kill the reading process (SIGBUS, SIGSEGV, an abort in LMDB) or
 * make it throw: here that only ends this child, which the parent reports as damage. The order matters:
 * a read transaction first, so a writer in another process (`hpd serve`, `hpd keys`) cannot reuse a page
 * of the snapshot while it is walked; the page walk (plain reads, lmdb-page-walk.ts) next; LMDB's own
 * reads of every key and value last, each value decoded as its store encodes it and encoded again, so
 * bytes a store could not have written are found too.
 */
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import type { DatabaseSpec, DeepReadVerdict } from './lmdb-deep-check.ts';
import { newestTxnid, walkLmdbFile } from './lmdb-page-walk.ts';

/** lmdb-js's encoder of a database (its own msgpackr instance), which its typings leave out. */
interface Encoding {
  readonly encoder: { encode(value: unknown): Uint8Array };
}

/** How often the snapshot is taken again when a writer commits between its start and the walk. */
const SNAPSHOT_ATTEMPTS = 50;

/**
 * Whether `bytes` hold a UTF-16 surrogate encoded as UTF-8 (ED A0–BF 80–BF). msgpackr writes a lone
 * surrogate of a string that way and reads it back as U+FFFD, so such a value never encodes to the same
 * bytes again; any client can put one in a record (a client name in a registration), so those values are
 * not judged by their bytes. Garbage holds such a triple once in some 8,000 bytes.
 */
function hasEncodedSurrogate(bytes: Uint8Array): boolean {
  for (let i = 0; i + 2 < bytes.length; i++)
    if (bytes[i] === 0xed && (bytes[i + 1]! & 0xe0) === 0xa0 && (bytes[i + 2]! & 0xc0) === 0x80) return true;
  return false;
}

/** A database opened twice: its raw bytes, and its values decoded as its store decodes them. */
interface Handles {
  readonly raw: Database<Uint8Array, Uint8Array>;
  readonly typed: Database<unknown, Key> | null;
}

async function read(path: string, spec: DatabaseSpec): Promise<DeepReadVerdict> {
  const root = open({ path, noSubdir: true, readOnly: true, maxDbs: 64, compression: false });
  try {
    const handles = new Map<string, Handles>();
    for (let attempt = 0; attempt < SNAPSHOT_ATTEMPTS; attempt++) {
      const verdict = readSnapshot(root, path, spec, handles);
      if (verdict === 'moved') {
        // Taken again below.
      } else if ('unopened' in verdict) {
        // Opening a database ends lmdb-js's read transaction, so it happens between snapshots:
        // the walk has vetted the database list by then.
        for (const name of verdict.unopened) {
          const raw = root.openDB<Uint8Array, Uint8Array>({ name, keyEncoding: 'binary', encoding: 'binary' });
          const typed = spec[name] === 'binary' ? null : root.openDB<unknown, Key>({ name, compression: false });
          handles.set(name, { raw, typed });
        }
      } else return verdict;
      // lmdb-js keeps one read transaction per event turn: the next snapshot needs a new turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { unread: `a writer committed during each of ${SNAPSHOT_ATTEMPTS} attempts to read it` };
  } finally {
    void root.close();
  }
}

/**
 * The walk and LMDB's reads of one snapshot; 'moved' when a commit came between the snapshot's start
 * and the walk, which then walked a newer meta page than LMDB reads from; the databases the walk found
 * that have no handles yet.
 */
function readSnapshot(
  root: RootDatabase,
  path: string,
  spec: DatabaseSpec,
  handles: ReadonlyMap<string, Handles>,
): DeepReadVerdict | 'moved' | { readonly unopened: readonly string[] } {
  const before = newestTxnid(path);
  // Held until every read below is done: a writer in another process cannot reuse its pages meanwhile,
  // nor those of any newer snapshot. The reads of this synchronous turn share it.
  const snapshot = root.useReadTransaction();
  try {
    const walked = walkLmdbFile(path);
    if (typeof walked === 'string') return { damage: walked };
    if (walked.txnid !== before) return 'moved';
    const names = Object.keys(walked.databases);
    const unknown = names.find((name) => spec[name] === undefined);
    if (unknown !== undefined) return { damage: `it holds a database no store of hpd has: ${unknown}` };
    const unopened = names.filter((name) => !handles.has(name));
    if (unopened.length > 0) return { unopened };
    for (const name of names) {
      const { raw, typed } = handles.get(name)!;
      const decoded = typed === null ? null : typed.getRange()[Symbol.iterator]();
      let entries = 0;
      for (const { value } of raw.getRange()) {
        entries++;
        if (decoded === null || typed === null) continue;
        const next = decoded.next();
        if (next.done === true) return { damage: `database ${name} ends early when its values are decoded` };
        const again = (typed as unknown as Encoding).encoder.encode(next.value.value);
        if (Buffer.compare(Buffer.from(again), Buffer.from(value)) !== 0 && !hasEncodedSurrogate(value))
          return { damage: `a value of database ${name} is not what its store writes` };
      }
      if (entries !== walked.databases[name])
        return { damage: `database ${name} reads ${entries} entries, its pages hold ${walked.databases[name]}` };
    }
    return { databases: walked.databases };
  } finally {
    snapshot.done();
  }
}

const [path, spec] = process.argv.slice(2);
if (path === undefined || spec === undefined) {
  process.stderr.write('usage: lmdb-deep-read.ts FILE SPEC\n');
  process.exit(2);
}
let verdict: DeepReadVerdict;
try {
  verdict = await read(path, JSON.parse(spec) as DatabaseSpec);
} catch (err) {
  // LMDB's errors (MDB_PAGE_NOTFOUND, MDB_CORRUPTED) and a decoder's on garbage bytes alike; the parent
  // makes the message fit one line.
  verdict = { damage: `reading it failed: ${err instanceof Error ? err.message : String(err)}` };
}
process.stdout.write(`${JSON.stringify(verdict)}\n`);
