/**
 * @module Where build inputs come from: every URL in data/sources/*.json is the official
 * publisher's (CMS, HUD, Census) or PolicyEngine-US at a pinned commit, never a personal repository or
 * a moving branch, and has its checksum; `hpd sources init` writes a new year from the CMS patterns and
 * `--pin` records the checksums of what was downloaded (no network: the "download" is placed in the cache).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import type { SourcesFile } from '../../build/sources.ts';
import { runHpd } from '../helpers/run-hpd.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCES = join(ROOT, 'data', 'sources');
const OFFICIAL_HOSTS = new Set([
  'download.cms.gov',
  'www.cms.gov',
  'data.healthcare.gov',
  'www.huduser.gov',
  'www.census.gov',
  'www2.census.gov',
]);
const PINNED_POLICYENGINE = /^https:\/\/raw\.githubusercontent\.com\/PolicyEngine\/policyengine-us\/([0-9a-f]{40})\/[^?#]+$/;
const SHA256 = /^[0-9a-f]{64}$/;

/** Why `url` is not acceptable, or null. */
export function urlProblem(url: string): string | null {
  const u = new URL(url);
  if (u.protocol !== 'https:') return 'not https';
  if (OFFICIAL_HOSTS.has(u.hostname)) return null;
  if (u.hostname === 'raw.githubusercontent.com' || u.hostname === 'github.com')
    return PINNED_POLICYENGINE.test(url) ? null : 'a repository other than PolicyEngine-US at a 40-hex commit';
  return `host ${u.hostname} is not an official publisher`;
}

describe('data/sources/*.json', () => {
  const files = readdirSync(SOURCES).filter((f) => f.endsWith('.json'));

  test('the allow-list refuses personal repositories and moving branches', () => {
    assert.equal(
      urlProblem('https://raw.githubusercontent.com/someone/rep_map/main/ZIP_COUNTY_122024.csv'),
      'a repository other than PolicyEngine-US at a 40-hex commit',
    );
    assert.equal(
      urlProblem('https://raw.githubusercontent.com/PolicyEngine/policyengine-us/master/x.yaml'),
      'a repository other than PolicyEngine-US at a 40-hex commit',
    );
    assert.equal(
      urlProblem('https://raw.githubusercontent.com/PolicyEngine/policyengine-us/9048a47/x.yaml'),
      'a repository other than PolicyEngine-US at a 40-hex commit',
    );
    assert.equal(urlProblem('http://download.cms.gov/marketplace-puf/2025/rate-puf.zip'), 'not https');
    assert.equal(urlProblem('https://example.com/x.csv'), 'host example.com is not an official publisher');
    assert.equal(urlProblem('https://download.cms.gov/marketplace-puf/2025/rate-puf.zip'), null);
  });

  test('every URL is an official publisher’s or PolicyEngine-US at a pinned commit; each input has a sha256', () => {
    assert.ok(files.length > 0);
    for (const f of files) {
      const s = JSON.parse(readFileSync(join(SOURCES, f), 'utf8')) as SourcesFile;
      for (const [name, spec] of Object.entries(s.inputs)) {
        if (spec.url !== null) assert.equal(urlProblem(spec.url), null, `${f} ${name}: ${spec.url}`);
        // A checksum of the official download, or null until the first download is pinned.
        assert.ok(spec.url_sha256 === null || SHA256.test(spec.url_sha256), `${f} ${name}: url_sha256`);
        for (const m of spec.mirrors) if (m.sha256 !== undefined) assert.match(m.sha256, SHA256, `${f} ${name}: mirror sha256`);
        if (spec.required && f === '2025.json') {
          const known = spec.url_sha256 !== null || spec.mirrors.some((m) => m.sha256 !== undefined);
          assert.ok(known, `${f} ${name}: a required input has a sha256`);
        }
      }
    }
  });
});

describe('hpd sources init', () => {
  test('writes YEAR.json from the CMS patterns, carries the other inputs over, and --pin records checksums', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hpd-sources-'));
    try {
      const sources = join(dir, 'sources');
      const cache = join(dir, 'cache');
      mkdirSync(sources);
      copyFileSync(join(SOURCES, '2025.json'), join(sources, '2025.json'));
      const env = { ...process.env, HPD_CACHE_DIR: cache };
      const init = await runHpd(['sources', 'init', '--year', '2026', '--dir', sources], { env, cwd: ROOT });
      assert.equal(init.code, 0, init.stderr);
      const s = JSON.parse(readFileSync(join(sources, '2026.json'), 'utf8')) as SourcesFile;
      const prev = JSON.parse(readFileSync(join(SOURCES, '2025.json'), 'utf8')) as SourcesFile;
      assert.equal(s.year, 2026);
      assert.equal(s.inputs.plan_attributes!.url, 'https://download.cms.gov/marketplace-puf/2026/plan-attributes-puf.zip');
      assert.equal(s.inputs.service_area!.url, 'https://download.cms.gov/marketplace-puf/2026/service-area-puf.zip');
      assert.equal(s.inputs.rates!.url, 'https://download.cms.gov/marketplace-puf/2026/rate-puf.zip');
      assert.equal(s.inputs.crosswalk!.url, 'https://download.cms.gov/marketplace-puf/2027/plan-id-crosswalk-puf.zip');
      for (const n of ['plan_attributes', 'service_area', 'rates', 'benefits', 'crosswalk'])
        assert.equal(s.inputs[n]!.url_sha256, null, `${n} to be pinned`);
      assert.deepEqual(Object.keys(s.inputs).sort(), Object.keys(prev.inputs).sort());
      assert.deepEqual(s.inputs.hud_zip_county, prev.inputs.hud_zip_county);
      for (const spec of Object.values(s.inputs)) if (spec.url !== null) assert.equal(urlProblem(spec.url), null, spec.url);
      // A second init does not overwrite.
      const again = await runHpd(['sources', 'init', '--year', '2026', '--dir', sources], { env, cwd: ROOT });
      assert.equal(again.code, 1);
      assert.match(again.stderr, /exists/);

      // The first download lands in the cache (hpd build does that); --pin records its sha256.
      mkdirSync(join(cache, '2026'), { recursive: true });
      const bytes = 'PlanId,...\n';
      writeFileSync(join(cache, '2026', 'plan-attributes-puf.zip'), bytes);
      const pin = await runHpd(['sources', 'init', '--year', '2026', '--pin', '--dir', sources], { env, cwd: ROOT });
      assert.equal(pin.code, 0, pin.stderr);
      assert.match(pin.stdout, /pinned plan_attributes/);
      const pinned = JSON.parse(readFileSync(join(sources, '2026.json'), 'utf8')) as SourcesFile;
      assert.equal(pinned.inputs.plan_attributes!.url_sha256, createHash('sha256').update(bytes).digest('hex'));
      assert.equal(pinned.inputs.service_area!.url_sha256, null, 'not downloaded, not pinned');
      // A later download that differs from the pin is refused, not re-pinned.
      writeFileSync(join(cache, '2026', 'plan-attributes-puf.zip'), 'tampered\n');
      const bad = await runHpd(['sources', 'init', '--year', '2026', '--pin', '--dir', sources], { env, cwd: ROOT });
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /plan_attributes/);
      const missing = await runHpd(['sources', 'init', '--dir', sources], { env, cwd: ROOT });
      assert.equal(missing.code, 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("--sbe adds a state-exchange bundle per state, never carries another year's plan files, and --pin pins mirrors", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hpd-sources-sbe-'));
    try {
      const sources = join(dir, 'sources');
      mkdirSync(sources);
      // The newest file is 2024's, whose plan inputs are SBE bundles of 2024: none may reach 2026.
      copyFileSync(join(SOURCES, '2024.json'), join(sources, '2024.json'));
      const env = { ...process.env, HPD_CACHE_DIR: join(dir, 'cache') };
      const init = await runHpd(['sources', 'init', '--year', '2026', '--sbe', 'ct,RI', '--no-federal', '--dir', sources], {
        env,
        cwd: ROOT,
      });
      assert.equal(init.code, 0, init.stderr);
      const s = JSON.parse(readFileSync(join(sources, '2026.json'), 'utf8')) as SourcesFile;
      const plans = Object.keys(s.inputs).filter((n) => s.inputs[n]!.role !== undefined || n === 'plan_attributes');
      assert.deepEqual(plans, [
        'sbe_ct_plans',
        'sbe_ct_rates',
        'sbe_ct_service_areas',
        'sbe_ri_plans',
        'sbe_ri_rates',
        'sbe_ri_service_areas',
      ]);
      assert.deepEqual(
        [s.inputs.sbe_ct_plans!.bundle, s.inputs.sbe_ct_plans!.role, s.inputs.sbe_ct_plans!.dialect, s.inputs.sbe_ct_plans!.member],
        ['sbe-CT', 'plan_attributes', 'sbe', '^CTPlans\\d*\\.csv$'],
      );
      assert.ok(s.inputs.hud_zip_county !== undefined);

      // The operator places the file and names it as the mirror; --pin records its checksum.
      const file = join(dir, 'CTPlans01012026.csv');
      writeFileSync(file, 'BUSINESS YEAR\n');
      const placed = { ...s, inputs: { ...s.inputs, sbe_ct_plans: { ...s.inputs.sbe_ct_plans!, mirrors: [{ path: file }] } } };
      writeFileSync(join(sources, '2026.json'), JSON.stringify(placed));
      const pin = await runHpd(['sources', 'init', '--year', '2026', '--pin', '--dir', sources], { env, cwd: ROOT });
      assert.equal(pin.code, 0, pin.stderr);
      const pinned = JSON.parse(readFileSync(join(sources, '2026.json'), 'utf8')) as SourcesFile;
      assert.equal(pinned.inputs.sbe_ct_plans!.mirrors[0]!.sha256, createHash('sha256').update('BUSINESS YEAR\n').digest('hex'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
