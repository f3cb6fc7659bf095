/**
 * @module The baseline's SQLite schema: the reference architecture's tables and indexes.
 *
 * The reference design keeps the Rate PUF and the Plan Attributes PUF as relational tables and answers
 * every request with SQL: rates indexed by state, rating area, age and tobacco; plans indexed by state,
 * metal level and plan type; ZIP → county/rating area; the plans offered in each county. API keys are
 * looked up by their SHA-256 with a prepared statement. Nothing here is deliberately slow: every query
 * of the server has an index to use, statements are prepared once, and the database runs in WAL mode
 * with `synchronous = NORMAL`, a 64 MiB page cache and a memory map.
 */
import type { Database } from 'better-sqlite3';

export const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE plan_years (year INTEGER PRIMARY KEY);
CREATE TABLE users (id TEXT PRIMARY KEY, tier TEXT NOT NULL);
CREATE TABLE api_keys (id TEXT PRIMARY KEY, key_hash TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL REFERENCES users (id), revoked_at TEXT);
CREATE TABLE rating_areas (id INTEGER PRIMARY KEY, state TEXT NOT NULL, number INTEGER NOT NULL);
CREATE TABLE zip_locations (
  zip TEXT NOT NULL, ord INTEGER NOT NULL, state TEXT NOT NULL, county_fips TEXT NOT NULL, county_name TEXT NOT NULL,
  rating_area INTEGER NOT NULL, rating_area_id INTEGER NOT NULL REFERENCES rating_areas (id), plan_list INTEGER,
  PRIMARY KEY (zip, ord)
) WITHOUT ROWID;
CREATE TABLE plans (
  id TEXT PRIMARY KEY, standard_component_id TEXT NOT NULL, variant TEXT NOT NULL, year INTEGER NOT NULL,
  state TEXT NOT NULL, metal_level TEXT NOT NULL, plan_type TEXT NOT NULL,
  name TEXT NOT NULL, name_rank INTEGER NOT NULL, issuer TEXT NOT NULL, issuer_id TEXT NOT NULL, service_area_id TEXT NOT NULL,
  hsa_eligible INTEGER NOT NULL, national_network INTEGER NOT NULL,
  deductible_individual REAL, deductible_family REAL, moop_individual REAL, moop_family REAL,
  csr_variation TEXT NOT NULL, network_id TEXT, formulary_id TEXT,
  referral_required_for_specialist INTEGER NOT NULL, out_of_country_coverage INTEGER NOT NULL, out_of_service_area_coverage INTEGER NOT NULL,
  benefits_summary_url TEXT, brochure_url TEXT, formulary_url TEXT, provider_directory_url TEXT,
  deductible_json TEXT NOT NULL, moop_json TEXT NOT NULL, sbc_json TEXT NOT NULL
);
CREATE TABLE rates (plan_id TEXT NOT NULL, state TEXT NOT NULL, rating_area INTEGER NOT NULL, age INTEGER NOT NULL, tobacco TEXT NOT NULL, premium REAL NOT NULL);
CREATE TABLE county_plans (plan_list INTEGER NOT NULL, plan_id TEXT NOT NULL, PRIMARY KEY (plan_list, plan_id)) WITHOUT ROWID;
`;

/** Created after the bulk load (faster than maintaining them row by row), then ANALYZE. */
export const INDEXES = `
CREATE INDEX rates_by_state_area_age_tobacco ON rates (state, rating_area, age, tobacco);
CREATE INDEX plans_by_state_metal_type ON plans (state, metal_level, plan_type);
CREATE INDEX plans_by_component ON plans (standard_component_id, variant);
CREATE INDEX api_keys_by_user ON api_keys (user_id);
ANALYZE;
`;

/** The Rate PUF's value for plans without tobacco rating; the API prices non-tobacco users. */
export const NO_TOBACCO = 'No Preference';

/** Pragmas of a read-mostly service database. */
export function tune(db: Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('cache_size = -65536');
  db.pragma('mmap_size = 268435456');
  db.pragma('temp_store = MEMORY');
}
