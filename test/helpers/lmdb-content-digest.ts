/**
 * @module SHA-256 of what an LMDB file holds rather than of its bytes: every named database in name
 * order, each record's key and value bytes in key order, each length-prefixed. The file's bytes also
 * carry the storage engine's page layout, map size and transaction ids, which the same code and inputs
 * do not always reproduce: commit 7bdfd1d's PY2025 data.mdb hashed 9c2bdca6… when the federal-unchanged
 * test was written and a738fe21… hours later, from the same inputs, build hash and records. A test that
 * means "the same records" pins this digest instead.
 */
import { createHash } from 'node:crypto';
import { open } from 'lmdb';

/** `skip`: databases left out by name (the dental ones, to show the medical records unchanged). */
export function lmdbContentDigest(path: string, skip: (name: string) => boolean = () => false): string {
  const root = open({ path, noSubdir: true, readOnly: true, maxDbs: 64, keyEncoding: 'binary', encoding: 'binary' });
  try {
    const hash = createHash('sha256');
    // The unnamed database lists the named ones; its values are their B-tree roots, which are layout.
    const names = Array.from(root.getKeys(), (key) =>
      Buffer.from(key as Uint8Array)
        .toString('latin1')
        .replace(/\0$/, ''),
    );
    for (const name of names) {
      if (skip(name)) continue;
      const db = root.openDB({ name, keyEncoding: 'binary', encoding: 'binary' });
      hash.update(`${name}\0`);
      for (const { key, value } of db.getRange()) {
        const k = key as Uint8Array;
        const v = value as Uint8Array;
        hash.update(`${k.length}:`).update(k).update(`${v.length}:`).update(v);
      }
    }
    return hash.digest('hex');
  } finally {
    root.close();
  }
}
