/**
 * @module `node --import bin/register-typescript.js state-digest-child.ts FILE`: prints the content digest
 * of an LMDB file (test/helpers/lmdb-content-digest.ts). A child of its own, since reading a damaged file
 * may kill the reader.
 */
import { lmdbContentDigest } from '../helpers/lmdb-content-digest.ts';

process.stdout.write(`${lmdbContentDigest(process.argv[2]!)}\n`);
