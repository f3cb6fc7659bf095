/**
 * @module The federal PY2025 build, given no state-exchange input, is byte for byte the build of the
 * compiler before plan years could have several sources: the same build hash and the same
 * tables.bin, and the same records in data.mdb (its content digest: the file's own bytes also carry
 * LMDB's page layout, see lmdb-content-digest.ts). The pins were measured on commit 7bdfd1d; a change
 * that means to alter the 2025 build updates them and says why in its commit.
 *
 * Stand-alone dental plans changed the build on purpose: the compiler version (so the
 * build hash) and four new LMDB databases `dental-*`. Nothing else: tables.bin differs from 7bdfd1d's
 * only by the build hash written in its directory (with the old hash put back it hashes to the old
 * pin), and the records of every other database digest to the old pin.
 *
 * Connecticut's ZIPs placed by their legacy counties (HUD's Q4 2020 CT rows, a new input) changed the
 * geography on purpose: the 402 CT ZIPs resolve to legacy counties, every other ZIP resolves as before
 * (compared ZIP by ZIP against the previous build when the pins below were updated); locations 54,224 →
 * 54,201 and rating areas 500 → 501 (CT's area 7 is now used). tables.bin also carries each CT ZIP's
 * planning regions (its directory's `planningRegions`), shown beside the legacy counties.
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

test('PY2025 from the federal PUFs is the pinned build (same tables.bin bytes, same records)', {
  timeout: 120_000,
}, async () => {
  const built = await buildRealYear(dir, 2025);
  const hash = built.manifest.build_hash;
  assert.equal(hash, '5ff04503e0ea91a35eab5bc9642b74bd7874a26dbb40ad0d8e2ffcbdce75daf4');
  assert.equal(await sha256File(join(built.dir, 'tables.bin')), 'b52d46983846edfb57c5631b4250523b5c4de84f31a96cf6fd62bf6e0d39d276');
  assert.equal(built.manifest.counts.locations, 54201);
  assert.equal(built.manifest.counts.rating_areas, 501);
  const mdb = join(built.dir, 'data.mdb');
  assert.equal(
    lmdbContentDigest(mdb, (name) => name.startsWith('dental-')),
    '23462e5e22732e62b56c93b675d67bf63925dc72179969697924858edb1ca4ee',
  );
  assert.equal(lmdbContentDigest(mdb), '705c91c34b62be6b0422920331752a1b942479f244c64e17f0ef420c080bc190');
  // The labels every 2025 answer carries are unchanged, now recorded per state.
  assert.equal(built.manifest.data_freshness, 'PY2025 as of 2024-12-05; premiums modeled from SLCSP benchmarks');
  assert.equal(Object.keys(built.manifest.provenance ?? {}).length, 31);
  assert.ok(Object.values(built.manifest.provenance ?? {}).every((p) => p.source === 'federal' && p.premiums === 'modeled'));
});
