/**
 * @module The federal PY2025 build, given no state-exchange input, is byte for byte the build of the
 * compiler before plan years could have several sources (issue #23): the same build hash and the same
 * tables.bin, and the same records in data.mdb (its content digest: the file's own bytes also carry
 * LMDB's page layout, see lmdb-content-digest.ts). The pins were measured on commit 7bdfd1d; a change
 * that means to alter the 2025 build updates them and says why in its commit.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sha256File } from '../../build/sources.ts';
import { buildRealYear } from '../helpers/build-real-year.ts';
import { lmdbContentDigest } from '../helpers/lmdb-content-digest.ts';

const dir = mkdtempSync(join(tmpdir(), 'hpd-federal-2025-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('PY2025 from the federal PUFs is the build before SBE sources (same tables.bin bytes, same records)', {
  timeout: 120_000,
}, async () => {
  const built = await buildRealYear(dir, 2025);
  assert.equal(built.manifest.build_hash, '39376d9683b571e45066f5de2e482d3f295a1b34f5eddcdfe97ff85fd53ba9e6');
  assert.equal(await sha256File(join(built.dir, 'tables.bin')), 'b1cd3087fd948dd330e8bd1dcec81293025bf163fd69191db94ffa88dcafb31e');
  assert.equal(lmdbContentDigest(join(built.dir, 'data.mdb')), 'd2c8e94ec780621b202aad98b300b7656499207b1b84c46ec3e10a5bf93d90e2');
  // The labels every 2025 answer carries are unchanged, now recorded per state.
  assert.equal(built.manifest.data_freshness, 'PY2025 as of 2024-12-05; premiums modeled from SLCSP benchmarks');
  assert.equal(Object.keys(built.manifest.provenance ?? {}).length, 31);
  assert.ok(Object.values(built.manifest.provenance ?? {}).every((p) => p.source === 'federal' && p.premiums === 'modeled'));
});
