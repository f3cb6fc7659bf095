/**
 * @module Loads the baseline's SQLite database from a compiled build, so both servers answer from the
 * same data: every (plan, rating area, age band) premium row, every plan variant record, every ZIP
 * location and the plans offered at each location, all read through `src/engine/dataset.ts`.
 *
 * Usage: node --import ./bin/register-typescript.js bench/baseline/load.ts BUILD_DIR DB_PATH KEY_SHA256
 * Prints one JSON line with row counts and the load time.
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { AGE_BAND_COUNT, bandAge } from '../../src/engine/age-bands.ts';
import { NO_LIST } from '../../src/engine/build-format.ts';
import { openDataset, type ZipLocation } from '../../src/engine/dataset.ts';
import type { PlanVariantRecord } from '../../src/engine/plan-record.ts';
import { INDEXES, NO_TOBACCO, SCHEMA, tune } from './schema.ts';

export interface LoadSummary {
  readonly rates: number;
  readonly plans: number;
  readonly zip_locations: number;
  readonly county_plans: number;
  readonly load_ms: number;
}

/** CMS plan variant suffixes: 00 off exchange, 01 on exchange, 02/03 AI/AN, 04–06 silver CSR. */
const VARIANTS = ['00', '01', '02', '03', '04', '05', '06'];

export function loadBaseline(buildDir: string, dbPath: string, keyHashes: readonly string[]): LoadSummary {
  const t0 = performance.now();
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbPath}${suffix}`, { force: true });
  const ds = openDataset(buildDir);
  const db = new Database(dbPath);
  try {
    tune(db);
    db.exec(SCHEMA);
    let rates = 0;
    let plans = 0;
    let locations = 0;
    let offered = 0;
    db.transaction(() => {
      const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      meta.run('build_hash', ds.buildHash);
      meta.run('data_source', ds.manifest.data_source);
      meta.run('data_freshness', ds.manifest.data_freshness);
      db.prepare('INSERT INTO plan_years (year) VALUES (?)').run(ds.year);
      keyHashes.forEach((hash, i) => {
        db.prepare('INSERT INTO users (id, tier) VALUES (?, ?)').run(`usr_bench${i}`, 'enterprise');
        db.prepare('INSERT INTO api_keys (id, key_hash, user_id, revoked_at) VALUES (?, ?, ?, NULL)').run(
          `key_bench${i}`,
          hash,
          `usr_bench${i}`,
        );
      });

      // Geography: every ZIP's locations (primary first), the rating areas they name, the plan lists.
      const insLoc = db.prepare(
        'INSERT INTO zip_locations (zip, ord, state, county_fips, county_name, rating_area, rating_area_id, plan_list) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      );
      const areas = new Map<number, { state: string; number: number }>();
      const lists = new Set<number>();
      const zips: Array<readonly ZipLocation[]> = [];
      for (let z = 0; z < 100_000; z++) {
        const locs = ds.resolveZip(String(z).padStart(5, '0'));
        if (locs === null) continue;
        zips.push(locs);
        for (const l of locs) {
          areas.set(l.areaIndex, { state: l.state, number: l.ratingArea });
          if (l.listId !== NO_LIST) lists.add(l.listId);
        }
      }
      const insArea = db.prepare('INSERT INTO rating_areas (id, state, number) VALUES (?, ?, ?)');
      for (const [id, a] of areas) insArea.run(id, a.state, a.number);
      for (const locs of zips) {
        locs.forEach((l, ord) => {
          insLoc.run(l.zip, ord, l.state, l.countyFips, l.countyName, l.ratingArea, l.areaIndex, l.listId === NO_LIST ? null : l.listId);
          locations++;
        });
      }
      const insOffered = db.prepare('INSERT INTO county_plans (plan_list, plan_id) VALUES (?, ?)');
      const ids = ds.planIds();
      for (const list of lists) {
        const n = ds.listSize(list);
        for (let k = 0; k < n; k++) {
          insOffered.run(list, ids[ds.listPlan(list, k)]!);
          offered++;
        }
      }

      // Plans: every variant record, with the name's rank under the collation the API sorts names by.
      const collator = new Intl.Collator('en-US', { sensitivity: 'base', numeric: true });
      const records: PlanVariantRecord[] = [];
      for (const scid of ids) {
        for (const v of VARIANTS) {
          const rec = ds.planRecord(`${scid}-${v}`);
          if (rec !== undefined) records.push(rec);
        }
      }
      const names = [...new Set(records.map((r) => r.name))].sort((a, b) => collator.compare(a, b));
      const rank = new Map<string, number>();
      let r = -1;
      names.forEach((name, i) => {
        if (i === 0 || collator.compare(names[i - 1]!, name) !== 0) r++;
        rank.set(name, r);
      });
      const insPlan = db.prepare(`INSERT INTO plans VALUES (
        @id, @standard_component_id, @variant, @year, @state, @metal_level, @plan_type, @name, @name_rank, @issuer, @issuer_id, @service_area_id,
        @hsa_eligible, @national_network, @deductible_individual, @deductible_family, @moop_individual, @moop_family,
        @csr_variation, @network_id, @formulary_id, @referral, @out_of_country, @out_of_service_area,
        @benefits_summary_url, @brochure_url, @formulary_url, @provider_directory_url, @deductible_json, @moop_json, @sbc_json)`);
      for (const rec of records) {
        insPlan.run({
          id: rec.id,
          standard_component_id: rec.standard_component_id,
          variant: rec.variant,
          year: ds.year,
          state: rec.state,
          metal_level: rec.metal_level,
          plan_type: rec.plan_type,
          name: rec.name,
          name_rank: rank.get(rec.name)!,
          issuer: rec.issuer,
          issuer_id: rec.issuer_id,
          service_area_id: rec.service_area_id,
          hsa_eligible: rec.hsa_eligible ? 1 : 0,
          national_network: rec.national_network ? 1 : 0,
          deductible_individual: rec.deductible.individual_tier1,
          deductible_family: rec.deductible.family_tier1,
          moop_individual: rec.max_out_of_pocket.individual_tier1,
          moop_family: rec.max_out_of_pocket.family_tier1,
          csr_variation: rec.csr_variation,
          network_id: rec.network_id,
          formulary_id: rec.formulary_id,
          referral: rec.referral_required_for_specialist ? 1 : 0,
          out_of_country: rec.out_of_country_coverage ? 1 : 0,
          out_of_service_area: rec.out_of_service_area_coverage ? 1 : 0,
          benefits_summary_url: rec.links.benefits_summary,
          brochure_url: rec.links.brochure,
          formulary_url: rec.links.formulary,
          provider_directory_url: rec.links.provider_directory,
          deductible_json: JSON.stringify(rec.deductible),
          moop_json: JSON.stringify(rec.max_out_of_pocket),
          sbc_json: JSON.stringify(rec.sbc_scenarios),
        });
        plans++;
      }

      // Rates: one row per plan, rating area and age band, as the Rate PUF lists them (no row where the
      // plan is not sold at that age, e.g. child-only plans at adult ages).
      const areasByState = new Map<string, number[]>();
      for (const a of areas.values()) {
        let l = areasByState.get(a.state);
        if (l === undefined) areasByState.set(a.state, (l = []));
        if (!l.includes(a.number)) l.push(a.number);
      }
      const insRate = db.prepare('INSERT INTO rates (plan_id, state, rating_area, age, tobacco, premium) VALUES (?, ?, ?, ?, ?, ?)');
      for (let p = 0; p < ids.length; p++) {
        const scid = ids[p]!;
        const state = ds.plan(p).state;
        for (const area of areasByState.get(state) ?? []) {
          for (let b = 0; b < AGE_BAND_COUNT; b++) {
            const age = bandAge(b);
            const premium = ds.premium(scid, area, age);
            if (premium === null) continue;
            insRate.run(scid, state, area, age, NO_TOBACCO, premium);
            rates++;
          }
        }
      }
    })();
    db.exec(INDEXES);
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { rates, plans, zip_locations: locations, county_plans: offered, load_ms: Math.round(performance.now() - t0) };
  } finally {
    db.close();
    ds.close();
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [buildDir, dbPath, ...hashes] = process.argv.slice(2);
  if (buildDir === undefined || dbPath === undefined) {
    process.stderr.write('usage: load.ts BUILD_DIR DB_PATH [KEY_SHA256...]\n');
    process.exit(2);
  }
  process.stdout.write(`${JSON.stringify(loadBaseline(buildDir, dbPath, hashes))}\n`);
}
