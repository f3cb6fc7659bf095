/**
 * @module The federal PY2025 build, given no state-exchange input, is byte for byte the build of the
 * compiler before plan years could have several sources (issue #23): the same build hash and the same
 * tables.bin, and the same records in data.mdb (its content digest: the file's own bytes also carry
 * LMDB's page layout, see lmdb-content-digest.ts). The pins were measured on commit 7bdfd1d; a change
 * that means to alter the 2025 build updates them and says why in its commit.
 *
 * Stand-alone dental plans (issue #24 §5) changed the build on purpose: the compiler version (so the
 * build hash) and four new LMDB databases `dental-*`. Nothing else: tables.bin differs from 7bdfd1d's
 * only by the build hash written in its directory (with the old hash put back it hashes to the old
 * pin), and the records of every other database digest to the old pin.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sha256File } from '../../build/sources.ts';
import { buildRealYear } from '../helpers/build-real-year.ts';
import { lmdbContentDigest } from '../helpers/lmdb-content-digest.ts';

/** The build hash of 7bdfd1d's PY2025 build, before dental plans. */
const PRE_DENTAL_HASH = '39376d9683b571e45066f5de2e482d3f295a1b34f5eddcdfe97ff85fd53ba9e6';

const dir = mkdtempSync(join(tmpdir(), 'hpd-federal-2025-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('PY2025 from the federal PUFs is the build before SBE sources (same tables.bin bytes, same records)', {
  timeout: 120_000,
}, async () => {
  const built = await buildRealYear(dir, 2025);
  const hash = built.manifest.build_hash;
  assert.equal(hash, 'aaa44e2f8c723c3b92224e0844d44d3bfb8aa3bc5c116bc93ba47334fb65a67e');
  assert.equal(await sha256File(join(built.dir, 'tables.bin')), 'a93cecb5eb9068d56fbc1524bb9046f42e22406681f9eb14c49be9c7ccbd550a');
  const tables = readFileSync(join(built.dir, 'tables.bin'));
  const withOldHash = Buffer.from(tables.toString('latin1').replace(hash, PRE_DENTAL_HASH), 'latin1');
  assert.equal(createHash('sha256').update(withOldHash).digest('hex'), 'b1cd3087fd948dd330e8bd1dcec81293025bf163fd69191db94ffa88dcafb31e');
  const mdb = join(built.dir, 'data.mdb');
  assert.equal(
    lmdbContentDigest(mdb, (name) => name.startsWith('dental-')),
    'd2c8e94ec780621b202aad98b300b7656499207b1b84c46ec3e10a5bf93d90e2',
  );
  assert.equal(lmdbContentDigest(mdb), '2544c0937ec3ecd431615c6a0b50630e5ef9ebbcf982b6f5168248520c302ba1');
  // The labels every 2025 answer carries are unchanged, now recorded per state.
  assert.equal(built.manifest.data_freshness, 'PY2025 as of 2024-12-05; premiums modeled from SLCSP benchmarks');
  assert.equal(Object.keys(built.manifest.provenance ?? {}).length, 31);
  assert.ok(Object.values(built.manifest.provenance ?? {}).every((p) => p.source === 'federal' && p.premiums === 'modeled'));
});
