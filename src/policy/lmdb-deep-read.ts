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
import { open } from 'lmdb';
import type { DatabaseSpec, DeepReadVerdict } from './lmdb-deep-check.ts';
import { walkLmdbFile } from './lmdb-page-walk.ts';

/** lmdb-js's encoder of a database (its own msgpackr instance), which its typings leave out. */
interface Encoding {
  readonly encoder: { encode(value: unknown): Uint8Array };
}

function read(path: string, spec: DatabaseSpec): DeepReadVerdict {
  const root = open({ path, noSubdir: true, readOnly: true, maxDbs: 64, compression: false });
  try {
    // Held until every read below is done; the reads of this synchronous turn share it.
    const snapshot = root.useReadTransaction();
    try {
      const walked = walkLmdbFile(path);
      if (typeof walked === 'string') return { damage: walked };
      for (const name of Object.keys(walked.databases)) {
        if (spec[name] === undefined) return { damage: `it holds a database "${name}" no store of hpd has` };
        const raw = root.openDB({ name, keyEncoding: 'binary', encoding: 'binary' });
        const typed = spec[name] === 'binary' ? null : root.openDB({ name, compression: false });
        const decoded = typed === null ? null : typed.getRange()[Symbol.iterator]();
        let entries = 0;
        for (const { value } of raw.getRange()) {
          entries++;
          if (decoded === null || typed === null) continue;
          const next = decoded.next();
          if (next.done === true) return { damage: `database ${name} ends early when its values are decoded` };
          const again = (typed as unknown as Encoding).encoder.encode(next.value.value);
          if (Buffer.compare(Buffer.from(again), Buffer.from(value as Uint8Array)) !== 0)
            return { damage: `a value of database ${name} is not what its store writes` };
        }
        if (entries !== walked.databases[name])
          return { damage: `database ${name} reads ${entries} entries, its pages hold ${walked.databases[name]}` };
      }
      return { databases: walked.databases };
    } finally {
      snapshot.done();
    }
  } finally {
    void root.close();
  }
}

const [path, spec] = process.argv.slice(2);
if (path === undefined || spec === undefined) {
  process.stderr.write('usage: lmdb-deep-read.ts FILE SPEC\n');
  process.exit(2);
}
let verdict: DeepReadVerdict;
try {
  verdict = read(path, JSON.parse(spec) as DatabaseSpec);
} catch (err) {
  // LMDB's errors (MDB_PAGE_NOTFOUND, MDB_CORRUPTED) and a decoder's on garbage bytes alike.
  verdict = { damage: `reading it failed: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}` };
}
process.stdout.write(`${JSON.stringify(verdict)}\n`);
