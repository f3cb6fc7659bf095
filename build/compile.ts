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
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { FORMAT_VERSION, LMDB_FILE, TABLES_FILE, writeTables } from '../src/engine/build-format.ts';
import { BuildIntegrityError, checkBuild } from '../src/engine/build-integrity.ts';
import type { BuildManifest } from '../src/engine/manifest.ts';
import { availableRuleYears, loadRules, RulesValidationError } from '../src/engine/rules.ts';
import type { TaxYearRules } from '../src/engine/rules-types.ts';
import { loadBenchmarks } from './benchmarks.ts';
import { COMPILER_VERSION } from './compiler-version.ts';
import { writeManifest } from './build-manifest.ts';
import { coverPlans } from './coverage.ts';
import { compileDental } from './dental.ts';
import { loadGeography, type GeographyConfig } from './geo/geography.ts';
import { loadPlanSources } from './load-plan-sources.ts';
import { type PlanBundle, planBundles } from './plan-sources.ts';
import { stateProvenance } from './provenance.ts';
import { premiumsOfSources } from './source-premiums.ts';
import { METAL_FACTORS, VARIATION } from './model-rates.ts';
import { loadBenefits, type BenefitsByVariant } from './puf/benefits.ts';
import { loadCrosswalk, type CrosswalkTable } from './puf/crosswalk.ts';
import type { ProgressSink } from './progress.ts';
import {
  createTmpBuildDir,
  currentHash,
  discardTmpBuildDir,
  publishBuild,
  removeStaleTmpDirs,
  switchCurrent,
  yearDir,
  type PublishHooks,
} from './publish.ts';
import { DIAGNOSTIC_CODES, DiagnosticSink, FatalBuildError } from './read/diagnostics.ts';
import { openTable } from './read/table.ts';
import { loadSourcesFile, resolveInputs, type ResolvedInput } from './sources.ts';
import { assembleTables } from './tables/assemble.ts';
import { verifyBuild } from './verify-build.ts';
import { writeLmdb } from './write-lmdb.ts';
import { writeFailure } from './write-failure.ts';

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
  const { rules, rulesYear, rulesText } = pickRules(year, opts.rulesDir);

  const bundles = planBundles(sources, inputs);
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
    const manifest = await compileInto(tmpDir, {
      year,
      bundles,
      hash,
      inputs,
      rules,
      rulesYear,
      geoConfig,
      sink,
      progress,
      started,
    });
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
    throw writeFailure(err, progress.current(), tmpDir) ?? err;
  }
}

function pickRules(year: number, dir: string | undefined): { rules: TaxYearRules; rulesYear: number; rulesText: string } {
  const years = availableRuleYears(dir);
  if (years.length === 0) throw new FatalBuildError(DIAGNOSTIC_CODES.inputMissing, 'no rule tables in data/rules');
  // A plan year's credits need its own poverty guidelines and applicable percentages; borrowing a
  // neighbouring year's table would serve wrong APTC figures with nothing to say so.
  if (!years.includes(year)) {
    throw new FatalBuildError(
      DIAGNOSTIC_CODES.inputMissing,
      `no rule table data/rules/${year}.json (tables exist for ${years.join(', ')}): add the ${year} table (poverty guidelines of ${year - 1}, applicable percentages, age curves); a plan year never borrows another year's`,
    );
  }
  const rulesYear = year;
  const rulesDir = dir ?? new URL('../data/rules/', import.meta.url).pathname;
  let rules: TaxYearRules;
  try {
    rules = loadRules(rulesYear, dir);
  } catch (err) {
    if (err instanceof RulesValidationError) throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, err.message);
    throw err;
  }
  return { rules, rulesYear, rulesText: readFileSync(join(rulesDir, `${rulesYear}.json`), 'utf8') };
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
  readonly bundles: readonly PlanBundle[];
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

/** The geography inputs, joined into ZIP → county → rating area. */
function readGeography(ctx: CompileContext): ReturnType<typeof loadGeography> {
  const { inputs } = ctx;
  return loadGeography(
    {
      hud: need(inputs, 'hud_zip_county'),
      countyNames: need(inputs, 'county_names'),
      ctRegions: need(inputs, 'ct_planning_regions'),
      countyAreas: need(inputs, 'county_rating_areas'),
      countyAreas2014: need(inputs, 'county_rating_areas_2014'),
      zip3Areas: need(inputs, 'zip3_rating_areas'),
      laZip3: need(inputs, 'la_county_zip3'),
      ctLegacy: need(inputs, 'hud_zip_county_ct_2020'),
    },
    ctx.geoConfig,
    ctx.sink,
    ctx.progress,
  );
}

/** The inputs a build may go without: the crosswalk and the benefits PUF. */
async function readOptionalInputs(
  ctx: CompileContext,
  variantIds: ReadonlySet<string>,
  displayName: (name: string) => string,
): Promise<{ crosswalk: CrosswalkTable | null; benefits: BenefitsByVariant | null }> {
  const { inputs, year, sink, progress } = ctx;
  const crosswalkInput = inputs.get('crosswalk');
  const benefitsInput = inputs.get('benefits');
  return {
    crosswalk:
      crosswalkInput === undefined
        ? null
        : await loadCrosswalk(await openTable(crosswalkInput.path, displayName('crosswalk')), year, sink, progress),
    benefits:
      benefitsInput === undefined
        ? null
        : await loadBenefits(await openTable(benefitsInput.path, displayName('benefits')), year, variantIds, sink, progress),
  };
}

async function compileInto(dir: string, ctx: CompileContext): Promise<BuildManifest> {
  const { year, inputs, sink, progress, rules } = ctx;
  const displayName = (name: string): string => inputs.get(name)!.file;

  // Geography first: coverage of every plan is expressed in its counties and rating areas.
  const geo = await readGeography(ctx);
  for (const f of sink.files.keys()) sink.checkRejectedShare(f);

  const { bundles } = ctx;
  const plans = await loadPlanSources(bundles, year, sink, progress);
  if (plans.variants.size === 0) {
    const files = bundles.map((b) => b.planAttributes.input.file).join(', ');
    throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `${files}: no individual medical plan of ${year}`);
  }

  const coverageStage = progress.stage('coverage');
  const cover = coverPlans(plans.variants.values(), plans.serviceAreas, geo, sink, (state) => {
    const b = plans.states.get(state)!.bundle;
    return { planAttributes: b.planAttributes.input.file, serviceArea: b.serviceArea.input.file };
  });
  coverageStage.end(cover.coverage.size);

  const benchmarks = loadBenchmarks(need(inputs, 'slcsp_benchmarks'), year);
  const premiums = await premiumsOfSources(bundles, plans, { year, benchmarks, rules, planAreas: cover.planAreas }, sink, progress);
  const { rateTable } = premiums;

  const dental = compileDental(plans, geo, premiums.dentalRates, premiums.dentalRatedStates, sink);

  const { crosswalk, benefits } = await readOptionalInputs(ctx, new Set(plans.variants.keys()), displayName);

  const tablesStage = progress.stage('tables');
  const assembled = assembleTables({
    year: ctx.year,
    hash: ctx.hash,
    jurisdictions: ctx.geoConfig.jurisdictions.value,
    rules: ctx.rules,
    sink: ctx.sink,
    geo,
    variantsByScid: cover.variantsByScid,
    coverage: cover.coverage,
    rateTable,
    benchmarks,
    modeledStates: premiums.modeledStates,
  });
  const tablesBytes = writeTables(join(dir, TABLES_FILE), assembled.meta, assembled.arrays);
  tablesStage.end(assembled.rows);

  const lmdbStage = progress.stage('lmdb');
  const lmdbRows = await writeLmdb(join(dir, LMDB_FILE), {
    variants: plans.variants,
    geo,
    issuers: assembled.issuersByState,
    crosswalk,
    benefits,
    familyTiers: rateTable.familyTiers,
    dental,
  });
  lmdbStage.end(lmdbRows);

  return writeManifest(dir, {
    year,
    hash: ctx.hash,
    rulesYear: ctx.rulesYear,
    inputs,
    sink,
    progress,
    assembled,
    rateTable,
    premiumsModeled: premiums.modeledStates.size > 0,
    planImport: plans.newestImport,
    crosswalk,
    tablesBytes,
    provenance: stateProvenance(year, plans, premiums),
    benchmarksInForce: benchmarks.inForce ?? '',
    serviceAreas: { statewideByDecision: plans.statewideByDecision, plansWithoutServiceArea: cover.withoutServiceArea.length },
  });
}
