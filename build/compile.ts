/**
 * @module The data compiler: official CMS marketplace files → an immutable, verified build.
 *
 * Stages: resolve inputs → geography → plans and service areas → premiums (a Rate PUF, or modeled rows
 * compiled through the same loader) → optional crosswalk and benefits → columnar tables + LMDB +
 * manifest in a temporary directory → verify by opening it with the engine → atomic publish. The build
 * hash covers the inputs' checksums, the rule tables, the geography decisions and the compiler version,
 * so an unchanged year is not rebuilt and every API ETag changes exactly when the data does.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import { open as openLmdb } from 'lmdb';
import { AGE_BAND_COUNT } from '../src/engine/age-bands.ts';
import {
  DB,
  FORMAT_VERSION,
  LMDB_FILE,
  LMDB_OPTIONS,
  MANIFEST_FILE,
  METAL_CODES,
  NO_LIST,
  NULL_MONEY,
  PLAN_FLAG,
  PLAN_TYPE_CODES,
  SLCSP_SOURCE,
  SUMS_FILE,
  TABLES_FILE,
  writeTables,
  type TablesMeta,
  type TypedArray,
} from '../src/engine/build-format.ts';
import { BuildIntegrityError, checkBuild, describeOutputs, sumsText } from '../src/engine/build-integrity.ts';
import { openDataset } from '../src/engine/dataset.ts';
import type { BuildManifest, ManifestInput, StateCounts } from '../src/engine/manifest.ts';
import type { PlanVariantRecord } from '../src/engine/plan-record.ts';
import { ageCurveFor, availableRuleYears, loadRules } from '../src/engine/rules.ts';
import type { TaxYearRules } from '../src/engine/rules-types.ts';
import { loadBenchmarks, type BenchmarkTable } from './benchmarks.ts';
import { COMPILER_VERSION } from './compiler-version.ts';
import { areasOfCoverage, expandServiceArea, type Coverage } from './coverage.ts';
import { loadGeography, type Geography, type GeographyConfig } from './geo/geography.ts';
import { benchmarkByBand, benchmarkFor, METAL_FACTORS, MODELED_SOURCE_NAME, modeledRatePufCsv, modelPlans, VARIATION } from './model-rates.ts';
import { loadBenefits, type BenefitsByVariant } from './puf/benefits.ts';
import { loadCrosswalk, type CrosswalkTable } from './puf/crosswalk.ts';
import { loadPlanAttributes } from './puf/plan-attributes.ts';
import { loadRates, type RateTable } from './puf/rates.ts';
import { loadServiceAreas, serviceAreaKey } from './puf/service-area.ts';
import type { ProgressSink } from './progress.ts';
import { createTmpBuildDir, currentHash, discardTmpBuildDir, publishBuild, removeStaleTmpDirs, switchCurrent, yearDir, type PublishHooks } from './publish.ts';
import { DIAGNOSTIC_CODES, DiagnosticSink, FatalBuildError, formatDiagnostic } from './read/diagnostics.ts';
import { openTable, openTableFromStream } from './read/table.ts';
import { loadSourcesFile, resolveInputs, type ResolvedInput } from './sources.ts';

export interface BuildOptions {
  readonly year: number;
  /** Repository root (mirror paths in the sources file are relative to it). */
  readonly root: string;
  /** Where builds go: `<buildsRoot>/<year>/<hash>/`. */
  readonly buildsRoot: string;
  readonly cacheDir: string;
  readonly overrides?: Readonly<Record<string, string>>;
  readonly offline?: boolean;
  readonly fetchOptional?: boolean;
  /** Rebuild even when a build with the same hash exists. */
  readonly force?: boolean;
  /** Point `current` at the build (default true); false publishes it beside the current one. */
  readonly makeCurrent?: boolean;
  readonly sourcesFile?: string;
  readonly rulesDir?: string;
  readonly geographyFile?: string;
  readonly progress: ProgressSink;
  /** Test seam: observe (and pause in) the publication steps; see publish.ts. */
  readonly publishHooks?: PublishHooks;
}

export interface BuildResult {
  readonly dir: string;
  readonly manifest: BuildManifest;
  /** True when an identical build already existed and was (re)used. */
  readonly reused: boolean;
  readonly diagnostics: DiagnosticSink;
}

/** Builds (or reuses) the dataset of one plan year and makes it current. */
export async function buildDataset(opts: BuildOptions): Promise<BuildResult> {
  const started = performance.now();
  const { year, progress } = opts;
  const sink = new DiagnosticSink();
  const sources = loadSourcesFile(opts.sourcesFile ?? join(opts.root, 'data', 'sources', `${year}.json`));
  if (sources.year !== year) {
    throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `sources file is for ${sources.year}, not ${year}`);
  }
  const inputs = await resolveInputs(sources, {
    root: opts.root,
    cacheDir: opts.cacheDir,
    overrides: opts.overrides ?? {},
    offline: opts.offline ?? false,
    fetchOptional: opts.fetchOptional ?? false,
    progress,
  });
  const geographyFile = opts.geographyFile ?? join(opts.root, 'data', 'geo', 'geography.json');
  const geoConfig = JSON.parse(readFileSync(geographyFile, 'utf8')) as GeographyConfig;
  const { rules, rulesYear, rulesText } = pickRules(year, opts.rulesDir, sink);

  const hash = buildHash({ year, inputs, rulesText, geographyText: readFileSync(geographyFile, 'utf8') });
  const finalDir = join(yearDir(opts.buildsRoot, year), hash);
  removeStaleTmpDirs(opts.buildsRoot, year);
  if (opts.force !== true && existsSync(finalDir)) {
    // An identical build is reused only if it is intact: every file present with its recorded size and
    // SHA-256 (a few tenths of a second for the national build). Otherwise it is rebuilt, and publication
    // moves the damaged directory aside.
    let damage: string;
    try {
      const existing = checkBuild(finalDir, { checksums: true, expectedHash: hash });
      if (existing.legacy === null) {
        if (opts.makeCurrent !== false && currentHash(opts.buildsRoot, year) !== hash) {
          switchCurrent(opts.buildsRoot, year, hash);
          // A killed publication may have left current on its staged directory, spared above.
          removeStaleTmpDirs(opts.buildsRoot, year);
        }
        progress.info(`build ${hash.slice(0, 12)} for ${year} is up to date (${relative(opts.root, finalDir) || finalDir})`);
        return { dir: finalDir, manifest: existing.manifest, reused: true, diagnostics: sink };
      }
      damage = existing.legacy;
    } catch (err) {
      if (!(err instanceof BuildIntegrityError)) throw err;
      damage = err.message;
    }
    progress.warn(`hpd build: ${damage}; rebuilding it`);
  }

  const tmpDir = createTmpBuildDir(opts.buildsRoot, year, hash);
  try {
    const manifest = await compileInto(tmpDir, { year, hash, inputs, rules, rulesYear, geoConfig, sink, progress, started });
    const verify = progress.stage('verify');
    verifyBuild(tmpDir, manifest);
    verify.end(1);
    const published = publishBuild(tmpDir, opts.buildsRoot, year, hash, opts.publishHooks, opts.makeCurrent !== false);
    removeStaleTmpDirs(opts.buildsRoot, year);
    // `kept`: --force rebuilt a hash whose intact directory stays published; its manifest is what serves.
    const served = published.action === 'kept' ? checkBuild(published.dir, { checksums: false, expectedHash: hash }).manifest : manifest;
    return { dir: published.dir, manifest: served, reused: false, diagnostics: sink };
  } catch (err) {
    discardTmpBuildDir(tmpDir);
    throw err;
  }
}

function pickRules(year: number, dir: string | undefined, sink: DiagnosticSink): { rules: TaxYearRules; rulesYear: number; rulesText: string } {
  const years = availableRuleYears(dir);
  if (years.length === 0) throw new FatalBuildError(DIAGNOSTIC_CODES.inputMissing, 'no rule tables in data/rules');
  // Premium rating uses the coverage year's table; the nearest one stands in for a year without a table.
  const rulesYear = years.includes(year) ? year : years.reduce((best, y) => (Math.abs(y - year) < Math.abs(best - year) ? y : best));
  if (rulesYear !== year) {
    sink.warn({ file: 'data/rules', line: 0, column: 0, code: DIAGNOSTIC_CODES.model, reason: `no rule table for ${year}; age curves of ${rulesYear} used` });
  }
  const rulesDir = dir ?? new URL('../data/rules/', import.meta.url).pathname;
  return { rules: loadRules(rulesYear, dir), rulesYear, rulesText: readFileSync(join(rulesDir, `${rulesYear}.json`), 'utf8') };
}

function buildHash(parts: { year: number; inputs: Map<string, ResolvedInput>; rulesText: string; geographyText: string }): string {
  const h = createHash('sha256');
  h.update(`hpd-build\0${COMPILER_VERSION}\0${FORMAT_VERSION}\0${parts.year}\0`);
  for (const name of [...parts.inputs.keys()].sort()) h.update(`${name}=${parts.inputs.get(name)!.sha256}\0`);
  h.update(createHash('sha256').update(parts.rulesText).digest('hex'));
  h.update(createHash('sha256').update(parts.geographyText).digest('hex'));
  h.update(JSON.stringify({ METAL_FACTORS, VARIATION }));
  return h.digest('hex');
}

interface CompileContext {
  readonly year: number;
  readonly hash: string;
  readonly inputs: Map<string, ResolvedInput>;
  readonly rules: TaxYearRules;
  readonly rulesYear: number;
  readonly geoConfig: GeographyConfig;
  readonly sink: DiagnosticSink;
  readonly progress: ProgressSink;
  readonly started: number;
}

function need(inputs: Map<string, ResolvedInput>, name: string): string {
  const i = inputs.get(name);
  if (i === undefined) throw new FatalBuildError(DIAGNOSTIC_CODES.inputMissing, `${name}: required input missing from the sources file`);
  return i.path;
}

async function compileInto(dir: string, ctx: CompileContext): Promise<BuildManifest> {
  const { year, inputs, sink, progress, rules } = ctx;
  const displayName = (name: string): string => {
    const p = inputs.get(name)!.path;
    return p.split('/').at(-1)!;
  };

  // Geography first: coverage of every plan is expressed in its counties and rating areas.
  const geo = await loadGeography(
    {
      hud: need(inputs, 'hud_zip_county'),
      countyNames: need(inputs, 'county_names'),
      ctRegions: need(inputs, 'ct_planning_regions'),
      countyAreas: need(inputs, 'county_rating_areas'),
      countyAreas2014: need(inputs, 'county_rating_areas_2014'),
      zip3Areas: need(inputs, 'zip3_rating_areas'),
      laZip3: need(inputs, 'la_county_zip3'),
    },
    ctx.geoConfig,
    sink,
    progress,
  );
  for (const f of sink.files.keys()) sink.checkRejectedShare(f);

  const pa = await loadPlanAttributes(await openTable(need(inputs, 'plan_attributes'), displayName('plan_attributes')), year, sink, progress);
  const serviceAreas = await loadServiceAreas(await openTable(need(inputs, 'service_area'), displayName('service_area')), year, sink, progress);
  if (pa.variants.size === 0) {
    throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `${displayName('plan_attributes')}: no individual medical plan of ${year}`);
  }

  // Coverage per standard component (all variants of a plan share its service area).
  const coverageStage = progress.stage('coverage');
  const coverage = new Map<string, Coverage>();
  const planAreas = new Map<string, Set<number>>();
  const variantsByScid = new Map<string, PlanVariantRecord[]>();
  for (const v of pa.variants.values()) {
    let list = variantsByScid.get(v.standard_component_id);
    if (list === undefined) variantsByScid.set(v.standard_component_id, (list = []));
    list.push(v);
  }
  // Plans of an issuer share service areas: expand each service area once.
  const bySa = new Map<string, { cov: Coverage; areas: Set<number> }>();
  for (const [scid, variants] of variantsByScid) {
    const v = variants[0]!;
    const saKey = serviceAreaKey(v.issuer_id, v.service_area_id);
    const known = bySa.get(saKey);
    if (known !== undefined) {
      coverage.set(scid, known.cov);
      planAreas.set(scid, known.areas);
      continue;
    }
    const sa = serviceAreas.get(saKey);
    if (sa === undefined) {
      sink.warn({ file: displayName('plan_attributes'), line: 0, column: 0, columnName: 'ServiceAreaId', value: `${scid} ${v.service_area_id}`, code: DIAGNOSTIC_CODES.geography, reason: 'service area not in the Service Area PUF; the plan is offered nowhere' });
      coverage.set(scid, new Map());
      planAreas.set(scid, new Set());
      continue;
    }
    const cov = expandServiceArea(sa, geo);
    const areas = areasOfCoverage(cov, geo, sink, displayName('service_area'));
    bySa.set(saKey, { cov, areas });
    coverage.set(scid, cov);
    planAreas.set(scid, areas);
  }
  coverageStage.end(coverage.size);

  const benchmarks = loadBenchmarks(need(inputs, 'slcsp_benchmarks'), year);
  const scids = new Set(variantsByScid.keys());
  let rateTable: RateTable;
  let premiumsModeled: boolean;
  const ratesInput = inputs.get('rates');
  if (ratesInput !== undefined) {
    rateTable = await loadRates(await openTable(ratesInput.path, displayName('rates')), year, scids, sink, progress);
    premiumsModeled = rateTable.sourceNames.size > 0 && [...rateTable.sourceNames].every((s) => s === MODELED_SOURCE_NAME);
  } else {
    const plans = modelPlans(pa.variants.values(), (scid) => planAreas.get(scid) ?? new Set());
    const csv = modeledRatePufCsv({ year, plans, benchmarks, rules, importDate: pa.newestImport ?? `${year - 1}-12-01` }, sink);
    const table = await openTableFromStream(Readable.from(csv), `rate-puf.modeled.csv`);
    rateTable = await loadRates(table, year, scids, sink, progress, 'rates (modeled)');
    premiumsModeled = true;
    sink.files.delete('rate-puf.modeled.csv');
  }

  const crosswalkInput = inputs.get('crosswalk');
  let crosswalk: CrosswalkTable | null = null;
  if (crosswalkInput !== undefined) {
    crosswalk = await loadCrosswalk(await openTable(crosswalkInput.path, displayName('crosswalk')), year, sink, progress);
  }
  const benefitsInput = inputs.get('benefits');
  let benefits: BenefitsByVariant | null = null;
  if (benefitsInput !== undefined) {
    benefits = await loadBenefits(await openTable(benefitsInput.path, displayName('benefits')), year, new Set(pa.variants.keys()), sink, progress);
  }

  const tablesStage = progress.stage('tables');
  const assembled = assembleTables({ ctx, geo, variantsByScid, coverage, rateTable, benchmarks, premiumsModeled });
  const tablesBytes = writeTables(join(dir, TABLES_FILE), assembled.meta, assembled.arrays);
  tablesStage.end(assembled.rows);

  const lmdbStage = progress.stage('lmdb');
  const lmdbRows = await writeLmdb(join(dir, LMDB_FILE), { variants: pa.variants, geo, issuers: assembled.issuersByState, crosswalk, benefits, familyTiers: rateTable.familyTiers });
  lmdbStage.end(lmdbRows);

  const freshnessDate = [pa.newestImport, premiumsModeled ? null : rateTable.newestImport].filter((d): d is string => d !== null).sort().at(-1) ?? null;
  const dataSource = premiumsModeled ? 'puf_data+modeled_premiums' : 'puf_data';
  const dataFreshness = `PY${year} as of ${freshnessDate ?? 'unknown'}${premiumsModeled ? '; premiums modeled from SLCSP benchmarks' : ''}`;

  const manifestInputs: ManifestInput[] = [...inputs.values()].map((i) => {
    const counts = sink.files.get(i.path.split('/').at(-1)!);
    return {
      name: i.name,
      title: i.title,
      path: i.path,
      origin: i.origin,
      url: i.url,
      sha256: i.sha256,
      bytes: i.bytes,
      checksum_verified: i.checksumVerified,
      rows_read: counts?.rowsRead ?? null,
      rows_rejected: counts?.rowsRejected ?? null,
      rows_ignored: counts?.rowsIgnored ?? null,
    };
  });
  const lmdbBytes = statSync(join(dir, LMDB_FILE)).size;
  const manifest: BuildManifest = {
    format_version: FORMAT_VERSION,
    compiler_version: COMPILER_VERSION,
    build_hash: ctx.hash,
    year,
    built_at: new Date().toISOString(),
    data_source: dataSource,
    data_freshness: dataFreshness,
    premiums: premiumsModeled
      ? {
          source: 'modeled',
          description:
            'No Rate PUF was supplied: premiums are modeled. price(age) = SLCSP benchmark (state, rating area, year; 0–14 normalised) × age curve(age)/curve(0–14) × metal factor × per-plan variation (±12 %, from a hash of the plan id); silver plans of each rating area are scaled so the second-lowest benchmark-eligible silver premium equals the benchmark at every age.',
          benchmark_input: 'slcsp_benchmarks',
          metal_factors: METAL_FACTORS,
          variation: VARIATION,
          rules_year: ctx.rulesYear,
        }
      : { source: 'rate_puf', source_names: [...rateTable.sourceNames].sort() },
    rules_year: ctx.rulesYear,
    inputs: manifestInputs,
    counts: assembled.counts,
    states: assembled.states,
    crosswalk: crosswalk === null ? null : { source_year: crosswalk.sourceYear, target_year: crosswalk.targetYear, rows: crosswalk.rows, plans: crosswalk.plans.size, states: [...crosswalk.states].sort() },
    warnings: {
      count: sink.warningCount,
      rows_rejected: sink.errorCount,
      kept: sink.kept.map(formatDiagnostic),
      truncated: sink.truncated(),
    },
    stages: progress.summaries.map((s) => ({ ...s })),
    files: { [LMDB_FILE]: lmdbBytes, [TABLES_FILE]: tablesBytes },
    // Hashed from the files as they lie on disk, after LMDB closed them: what a reader will find.
    outputs: describeOutputs(dir),
  };
  const { writeFileSync } = await import('node:fs');
  const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
  writeFileSync(join(dir, MANIFEST_FILE), manifestText);
  writeFileSync(join(dir, SUMS_FILE), sumsText(manifest.outputs ?? [], createHash('sha256').update(manifestText).digest('hex')));
  return manifest;
}

interface AssembleInput {
  readonly ctx: CompileContext;
  readonly geo: Geography;
  readonly variantsByScid: Map<string, PlanVariantRecord[]>;
  readonly coverage: Map<string, Coverage>;
  readonly rateTable: RateTable;
  readonly benchmarks: BenchmarkTable;
  readonly premiumsModeled: boolean;
}

interface Assembled {
  readonly meta: TablesMeta;
  readonly arrays: Record<string, TypedArray>;
  readonly rows: number;
  readonly counts: BuildManifest['counts'];
  readonly states: Record<string, StateCounts>;
  readonly issuersByState: Map<string, Array<{ issuer_id: string; name: string; plan_count: number }>>;
}

function assembleTables(a: AssembleInput): Assembled {
  const { geo, variantsByScid, coverage, rateTable, benchmarks, ctx } = a;
  const jurisdictions = ctx.geoConfig.jurisdictions.value;
  const states = [...jurisdictions].sort();
  const stateIdx = new Map(states.map((s, i) => [s, i]));

  // Rating areas: every area of the geography plus any the rates use.
  const areaKeys: Array<[string, number]> = [];
  const areaIdx = new Map<string, number>();
  const addArea = (state: string, n: number): number => {
    const key = `${state}:${n}`;
    let i = areaIdx.get(key);
    if (i === undefined) {
      i = areaKeys.length;
      areaKeys.push([state, n]);
      areaIdx.set(key, i);
    }
    return i;
  };
  for (const s of states) for (const n of [...(geo.stateAreas.get(s) ?? [])].sort((x, y) => x - y)) addArea(s, n);

  // Plans: one index per standard component id, sorted for stable builds.
  const scids = [...variantsByScid.keys()].sort();
  const planIndex = new Map(scids.map((s, i) => [s, i]));
  const primary = (scid: string): PlanVariantRecord => {
    const vs = variantsByScid.get(scid)!;
    return vs.find((v) => v.variant === '01') ?? vs.find((v) => v.variant === '00') ?? vs[0]!;
  };
  const issuers: Array<{ id: string; name: string }> = [];
  const issuerIdx = new Map<string, number>();
  const nP = scids.length;
  const planMetal = new Uint8Array(nP);
  const planType = new Uint8Array(nP);
  const planState = new Uint8Array(nP);
  const planIssuer = new Uint16Array(nP);
  const planFlags = new Uint8Array(nP);
  const planDeductible = new Float64Array(nP);
  const planMoop = new Float64Array(nP);
  const planNames: string[] = [];
  for (let i = 0; i < nP; i++) {
    const scid = scids[i]!;
    const v = primary(scid);
    planMetal[i] = METAL_CODES.indexOf(v.metal_level);
    planType[i] = PLAN_TYPE_CODES.indexOf(v.plan_type);
    planState[i] = stateIdx.get(v.state) ?? 255;
    let ii = issuerIdx.get(v.issuer_id);
    if (ii === undefined) {
      ii = issuers.length;
      issuers.push({ id: v.issuer_id, name: v.issuer });
      issuerIdx.set(v.issuer_id, ii);
    }
    planIssuer[i] = ii;
    const vs = variantsByScid.get(scid)!;
    planFlags[i] =
      (v.child_only ? PLAN_FLAG.childOnly : 0) |
      (vs.some((x) => x.variant === '01') ? PLAN_FLAG.onExchange : 0) |
      (v.national_network ? PLAN_FLAG.nationalNetwork : 0) |
      (v.hsa_eligible ? PLAN_FLAG.hsaEligible : 0);
    planDeductible[i] = v.deductible.individual_tier1 ?? NULL_MONEY;
    planMoop[i] = v.max_out_of_pocket.individual_tier1 ?? NULL_MONEY;
    planNames.push(v.name);
  }

  // Premium pairs (plan × area), in plan then area order.
  const pairPlan: number[] = [];
  const pairArea: number[] = [];
  const pairKey = new Map<number, number>();
  const centsChunks: Uint32Array[] = [];
  let rateRows = 0;
  for (let p = 0; p < nP; p++) {
    const byArea = rateTable.rates.get(scids[p]!);
    if (byArea === undefined) continue;
    const state = primary(scids[p]!).state;
    for (const n of [...byArea.keys()].sort((x, y) => x - y)) {
      const ai = addArea(state, n);
      pairKey.set(p * 4096 + ai, pairPlan.length);
      pairPlan.push(p);
      pairArea.push(ai);
      centsChunks.push(byArea.get(n)!);
      rateRows += AGE_BAND_COUNT;
    }
  }
  const nPairs = pairPlan.length;
  const cents = new Uint32Array(nPairs * AGE_BAND_COUNT);
  centsChunks.forEach((c, i) => cents.set(c, i * AGE_BAND_COUNT));

  // Plan lists per location, deduplicated by (area, plans).
  const wholeCounty = new Map<string, number[]>();
  const partialCounty = new Map<string, Array<{ plan: number; zips: ReadonlySet<string> }>>();
  for (let p = 0; p < nP; p++) {
    if ((planFlags[p]! & PLAN_FLAG.onExchange) === 0) continue; // off-exchange plans are not offered on the marketplace
    for (const [fips, zips] of coverage.get(scids[p]!) ?? []) {
      if (zips === null) {
        let l = wholeCounty.get(fips);
        if (l === undefined) wholeCounty.set(fips, (l = []));
        l.push(p);
      } else {
        let l = partialCounty.get(fips);
        if (l === undefined) partialCounty.set(fips, (l = []));
        l.push({ plan: p, zips });
      }
    }
  }
  const listIds = new Map<string, number>();
  const lists: Array<{ area: number; plans: number[] }> = [];
  const zipNumbers = [...geo.zips.keys()].sort();
  const locCounty: number[] = [];
  const locArea: number[] = [];
  const locShare: number[] = [];
  const locList: number[] = [];
  const zipStart = new Uint32Array(100_001);
  let zipCursor = 0;
  for (const zip of zipNumbers) {
    const z = Number(zip);
    while (zipCursor <= z) zipStart[zipCursor++] = locCounty.length;
    for (const loc of geo.zips.get(zip)!) {
      const ai = addArea(loc.state, loc.ratingArea);
      const plans: number[] = [];
      for (const p of wholeCounty.get(loc.countyFips) ?? []) if (pairKey.has(p * 4096 + ai)) plans.push(p);
      for (const { plan, zips } of partialCounty.get(loc.countyFips) ?? []) {
        if (zips.has(zip) && pairKey.has(plan * 4096 + ai)) plans.push(plan);
      }
      plans.sort((x, y) => x - y);
      let listId: number = NO_LIST;
      if (plans.length > 0) {
        const key = `${ai}:${plans.join(',')}`;
        let id = listIds.get(key);
        if (id === undefined) {
          id = lists.length;
          lists.push({ area: ai, plans });
          listIds.set(key, id);
        }
        listId = id;
      }
      locCounty.push(Number(loc.countyFips));
      locArea.push(ai);
      locShare.push(loc.resRatio);
      locList.push(listId);
    }
  }
  while (zipCursor <= 100_000) zipStart[zipCursor++] = locCounty.length;

  // List entries and their orders: names, deductibles, MOOPs, and premiums per age band (deduplicated).
  const nL = lists.length;
  const listStart = new Uint32Array(nL + 1);
  const listArea = new Uint16Array(nL);
  let nE = 0;
  for (let l = 0; l < nL; l++) {
    listStart[l] = nE;
    listArea[l] = lists[l]!.area;
    nE += lists[l]!.plans.length;
  }
  listStart[nL] = nE;
  const entryPlan = new Uint32Array(nE);
  const entryPair = new Uint32Array(nE);
  const orderName = new Uint16Array(nE);
  const orderDeductible = new Uint16Array(nE);
  const orderMoop = new Uint16Array(nE);
  const premiumRef = new Uint32Array(nL * AGE_BAND_COUNT);
  const premiumPool: number[] = [];
  const collator = new Intl.Collator('en-US', { sensitivity: 'base', numeric: true });
  const byMoney = (col: Float64Array) => (x: number, y: number): number => {
    const a0 = col[x]!;
    const b0 = col[y]!;
    if (a0 === NULL_MONEY || b0 === NULL_MONEY) return (a0 === NULL_MONEY ? 1 : 0) - (b0 === NULL_MONEY ? 1 : 0);
    return a0 - b0;
  };
  const tie = (x: number, y: number): number => (scids[x]! < scids[y]! ? -1 : scids[x]! > scids[y]! ? 1 : 0);
  for (let l = 0; l < nL; l++) {
    const { area, plans } = lists[l]!;
    const base = listStart[l]!;
    plans.forEach((p, k) => {
      entryPlan[base + k] = p;
      entryPair[base + k] = pairKey.get(p * 4096 + area)!;
    });
    const positions = plans.map((_, k) => k);
    const write = (target: Uint16Array, cmp: (x: number, y: number) => number): void => {
      const sorted = [...positions].sort((i, j) => cmp(plans[i]!, plans[j]!) || tie(plans[i]!, plans[j]!));
      sorted.forEach((pos, k) => (target[base + k] = pos));
    };
    write(orderName, (x, y) => collator.compare(planNames[x]!, planNames[y]!));
    write(orderDeductible, byMoney(planDeductible));
    write(orderMoop, byMoney(planMoop));
    const seen = new Map<string, number>();
    for (let b = 0; b < AGE_BAND_COUNT; b++) {
      const premium = (pos: number): number => {
        const c = cents[entryPair[base + pos]! * AGE_BAND_COUNT + b]!;
        return c === 0 ? Number.MAX_SAFE_INTEGER : c; // not sold at this age: last
      };
      const sorted = [...positions].sort((i, j) => premium(i) - premium(j) || tie(plans[i]!, plans[j]!));
      const key = sorted.join(',');
      let ref = seen.get(key);
      if (ref === undefined) {
        ref = premiumPool.length;
        for (const pos of sorted) premiumPool.push(pos);
        seen.set(key, ref);
      }
      premiumRef[l * AGE_BAND_COUNT + b] = ref;
    }
  }

  // SLCSP per rating area and age band: from the build's premiums where the state has plans, else the
  // benchmark table (an approximation, flagged by its source code).
  const nA = areaKeys.length;
  const slcspCents = new Uint32Array(nA * AGE_BAND_COUNT);
  const slcspSource = new Uint8Array(nA);
  const silverByArea = new Map<number, number[]>();
  for (let i = 0; i < nPairs; i++) {
    const p = pairPlan[i]!;
    if (METAL_CODES[planMetal[p]!] !== 'silver' || (planFlags[p]! & PLAN_FLAG.onExchange) === 0 || (planFlags[p]! & PLAN_FLAG.childOnly) !== 0) continue;
    let l = silverByArea.get(pairArea[i]!);
    if (l === undefined) silverByArea.set(pairArea[i]!, (l = []));
    l.push(i);
  }
  const statesWithPlans = new Set(scids.map((s) => primary(s).state));
  for (let ai = 0; ai < nA; ai++) {
    const [state, n] = areaKeys[ai]!;
    const silver = silverByArea.get(ai);
    if (silver !== undefined && silver.length > 0) {
      for (let b = 0; b < AGE_BAND_COUNT; b++) {
        const values = silver.map((i) => cents[i * AGE_BAND_COUNT + b]!).filter((c) => c > 0).sort((x, y) => x - y);
        if (values.length > 0) slcspCents[ai * AGE_BAND_COUNT + b] = values[1] ?? values[0]!;
      }
      slcspSource[ai] = a.premiumsModeled ? SLCSP_SOURCE.modeled : SLCSP_SOURCE.ratePuf;
      continue;
    }
    if (statesWithPlans.has(state)) continue; // plan data but no silver plan here: no benchmark to give
    const bench = benchmarkFor(benchmarks, state, n, ctx.sink, false);
    if (bench === null) continue;
    const community = ctx.rules.family_tiers[state] !== undefined;
    const byBand = benchmarkByBand(bench, ageCurveFor(ctx.rules, state).factors, community);
    byBand.forEach((v, b) => (slcspCents[ai * AGE_BAND_COUNT + b] = Math.round(v * 100)));
    slcspSource[ai] = SLCSP_SOURCE.benchmarkOnly;
  }

  // Issuers per state (plan_count = on-exchange standard variants).
  const issuersByState = new Map<string, Array<{ issuer_id: string; name: string; plan_count: number }>>();
  const stateCounts: Record<string, StateCounts> = {};
  const emptyState = (): StateCounts => ({ plans: 0, variants: 0, issuers: 0, zips: 0, counties: 0, rating_areas: 0, priced_pairs: 0 });
  for (const scid of scids) {
    const v = primary(scid);
    const sc = (stateCounts[v.state] ??= emptyState());
    sc.plans += 1;
    sc.variants += variantsByScid.get(scid)!.length;
    if (v.variant !== '01') continue;
    let list = issuersByState.get(v.state);
    if (list === undefined) issuersByState.set(v.state, (list = []));
    let entry = list.find((x) => x.issuer_id === v.issuer_id);
    if (entry === undefined) list.push((entry = { issuer_id: v.issuer_id, name: v.issuer, plan_count: 0 }));
    entry.plan_count += 1;
  }
  for (const [state, list] of issuersByState) {
    list.sort((x, y) => collator.compare(x.name, y.name) || (x.issuer_id < y.issuer_id ? -1 : 1));
    (stateCounts[state] ??= emptyState()).issuers = list.length;
  }
  for (const [zip, locs] of geo.zips) {
    void zip;
    const st = locs[0]!.state;
    (stateCounts[st] ??= emptyState()).zips += 1;
  }
  for (const c of geo.counties.values()) if (geo.countyAreas.has(c.fips) && stateCounts[c.state] !== undefined) stateCounts[c.state]!.counties += 1;
  for (const [state, areas] of geo.stateAreas) (stateCounts[state] ??= emptyState()).rating_areas = areas.size;
  for (let i = 0; i < nPairs; i++) stateCounts[primary(scids[pairPlan[i]!]!).state]!.priced_pairs += 1;

  const countyNames: Record<string, string> = {};
  for (const c of geo.counties.values()) countyNames[c.fips] = c.name;
  const areaState = new Uint8Array(nA);
  const areaNumber = new Uint16Array(nA);
  areaKeys.forEach(([s, n], i) => {
    areaState[i] = stateIdx.get(s) ?? 255;
    areaNumber[i] = n;
  });

  const meta: TablesMeta = { year: ctx.year, buildHash: ctx.hash, states, plans: scids, planNames, issuers, countyNames };
  const arrays: Record<string, TypedArray> = {
    'area.state': areaState,
    'area.number': areaNumber,
    'zip.start': zipStart,
    'loc.county': Uint32Array.from(locCounty),
    'loc.area': Uint16Array.from(locArea),
    'loc.share': Float32Array.from(locShare),
    'loc.list': Uint32Array.from(locList),
    'plan.metal': planMetal,
    'plan.type': planType,
    'plan.state': planState,
    'plan.issuer': planIssuer,
    'plan.flags': planFlags,
    'plan.deductible': planDeductible,
    'plan.moop': planMoop,
    'pair.plan': Uint32Array.from(pairPlan),
    'pair.area': Uint16Array.from(pairArea),
    'pair.cents': cents,
    'list.start': listStart,
    'list.area': listArea,
    'entry.plan': entryPlan,
    'entry.pair': entryPair,
    'order.name': orderName,
    'order.deductible': orderDeductible,
    'order.moop': orderMoop,
    'order.premium-ref': premiumRef,
    'order.premium-pool': Uint16Array.from(premiumPool),
    'slcsp.cents': slcspCents,
    'slcsp.source': slcspSource,
  };
  const variantsTotal = [...variantsByScid.values()].reduce((n, v) => n + v.length, 0);
  return {
    meta,
    arrays,
    rows: nPairs + locCounty.length + nE,
    counts: {
      plan_variants: variantsTotal,
      plans: nP,
      offered_plans: [...planFlags].filter((f) => (f & PLAN_FLAG.onExchange) !== 0).length,
      issuers: issuers.length,
      states_with_plans: statesWithPlans.size,
      zips: geo.zips.size,
      locations: locCounty.length,
      counties: [...geo.counties.values()].filter((c) => geo.countyAreas.has(c.fips)).length,
      rating_areas: nA,
      premium_pairs: nPairs,
      rate_rows: rateRows,
      plan_lists: nL,
      plan_list_entries: nE,
    },
    states: stateCounts,
    issuersByState,
  };
}

async function writeLmdb(
  path: string,
  data: {
    variants: Map<string, PlanVariantRecord>;
    geo: Geography;
    issuers: Map<string, Array<{ issuer_id: string; name: string; plan_count: number }>>;
    crosswalk: CrosswalkTable | null;
    benefits: BenefitsByVariant | null;
    familyTiers: RateTable['familyTiers'];
  },
): Promise<number> {
  const root = openLmdb({ path, ...LMDB_OPTIONS });
  let n = 0;
  try {
    const plans = root.openDB({ name: DB.plans });
    const zips = root.openDB({ name: DB.zips });
    const counties = root.openDB({ name: DB.counties });
    const issuers = root.openDB({ name: DB.issuers });
    const crosswalk = root.openDB({ name: DB.crosswalk });
    const benefits = root.openDB({ name: DB.benefits });
    const familyTiers = root.openDB({ name: DB.familyTiers });
    await root.transaction(() => {
      for (const [id, rec] of data.variants) {
        plans.put(id, rec);
        n++;
      }
      for (const [zip, locs] of data.geo.zips) {
        zips.put(zip, locs.map((l) => ({ state: l.state, county_fips: l.countyFips, county_name: l.countyName, rating_area: l.ratingArea, res_ratio: l.resRatio, tot_ratio: l.totRatio })));
        n++;
      }
      for (const c of data.geo.counties.values()) {
        counties.put(c.fips, { state: c.state, name: c.name, rating_areas: [...(data.geo.countyAreas.get(c.fips) ?? [])].sort((x, y) => x - y) });
        n++;
      }
      for (const [state, list] of data.issuers) {
        issuers.put(state, list);
        n++;
      }
      if (data.crosswalk !== null) {
        for (const [planId, entries] of data.crosswalk.plans) {
          crosswalk.put(planId, entries);
          n++;
        }
      }
      if (data.benefits !== null) {
        for (const [id, b] of data.benefits) {
          benefits.put(id, b);
          n++;
        }
      }
      for (const [scid, byArea] of data.familyTiers) {
        for (const [area, t] of byArea) {
          familyTiers.put([scid, area], t);
          n++;
        }
      }
    });
    await root.flushed;
  } finally {
    await root.close();
  }
  return n;
}

/** Opens the finished build the way a server will and checks it against the manifest. */
function verifyBuild(dir: string, manifest: BuildManifest): void {
  let ds;
  try {
    // Checksums too: this proves the sums just recorded match the bytes a server will map.
    ds = openDataset(dir, { checksums: 'always', expectedHash: manifest.build_hash });
  } catch (err) {
    throw new FatalBuildError(DIAGNOSTIC_CODES.verify, `verification failed: the new build does not open: ${(err as Error).message}`);
  }
  try {
    const problems: string[] = [];
    if (ds.buildHash !== manifest.build_hash) problems.push('build hash differs from the manifest');
    if (ds.planCount !== manifest.counts.plans) problems.push(`plan count ${ds.planCount} ≠ ${manifest.counts.plans}`);
    if (ds.zipCount !== manifest.counts.zips) problems.push(`ZIP count ${ds.zipCount} ≠ ${manifest.counts.zips}`);
    const someZip = ds.sampleZip();
    if (someZip !== null && ds.resolveZip(someZip) === null) problems.push(`ZIP ${someZip} does not resolve`);
    const firstPlan = ds.planIds()[0];
    if (firstPlan !== undefined && ds.planRecord(`${firstPlan}-01`) === undefined && ds.planRecord(`${firstPlan}-00`) === undefined) {
      problems.push(`plan ${firstPlan} has no detail record`);
    }
    if (problems.length > 0) throw new FatalBuildError(DIAGNOSTIC_CODES.verify, `verification failed: ${problems.join('; ')}`);
  } finally {
    ds.close();
  }
}
