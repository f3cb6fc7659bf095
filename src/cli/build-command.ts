/**
 * @module `hpd build`: compile a plan year's official files into a build and make it current.
 */
import { buildDataset } from '../../build/compile.ts';
import { createProgress } from '../../build/progress.ts';
import { discardAllActive } from '../../build/publish.ts';
import { DIAGNOSTIC_CODES, FatalBuildError } from '../../build/read/diagnostics.ts';
import { loadSourcesFile } from '../../build/sources.ts';
import { buildsRoot, cacheRoot, REPO_ROOT } from './paths.ts';
import { join, resolve } from 'node:path';
import { parseCommandArgs } from './args.ts';
import { planYearArg } from './plan-year-arg.ts';

export const BUILD_USAGE = `Usage: hpd build --year YEAR [options]

Compiles the official CMS marketplace files of a plan year into data/builds/YEAR/<hash>/ and points
data/builds/YEAR/current at it. Inputs are listed in data/sources/YEAR.json. An identical existing build
is reused only after its files match the sizes and SHA-256 sums in its manifest; otherwise it is rebuilt.

Options:
  --year YEAR            plan year (required)
  --<input> PATH         use this file for an input, e.g. --plan-attributes, --service-area, --rates,
                         --crosswalk, --benefits, --hud-zip-county, --slcsp-benchmarks
  --out DIR              builds directory (default data/builds, or $HPD_DATA_DIR)
  --offline              never download; fail with the input's official URL when it is missing
  --fetch-optional       also download optional inputs (Rate PUF, crosswalk, benefits) when missing
  --force                recompile even if an identical build exists (an intact published build is
                         kept and made current; a damaged one is moved aside and replaced)
  --no-switch            publish the build without making it current: compare it first with
                         hpd builds diff YEAR:HASH YEAR, then switch with hpd builds use YEAR HASH
  --sources FILE         sources file (default data/sources/YEAR.json)
  --json                 print the summary as JSON on stdout
  --quiet                no progress output`;

export async function buildCommand(argv: readonly string[]): Promise<number> {
  const yearIdx = argv.indexOf('--year');
  const yearText = yearIdx >= 0 ? argv[yearIdx + 1] : argv.find((a) => a.startsWith('--year='))?.slice(7);
  const year = planYearArg(yearText, '--year');
  const sourcesArg =
    argv.find((a) => a.startsWith('--sources='))?.slice(10) ??
    (argv.includes('--sources') ? argv[argv.indexOf('--sources') + 1] : undefined);
  const sourcesFile = sourcesArg !== undefined ? resolve(sourcesArg) : join(REPO_ROOT, 'data', 'sources', `${year}.json`);
  const sources = loadSourcesFile(sourcesFile);
  const inputOptions = Object.fromEntries(
    Object.keys(sources.inputs).map((name) => [name.replaceAll('_', '-'), { type: 'string' as const }]),
  );
  const v = parseCommandArgs('build', argv, {
    year: { type: 'string' },
    out: { type: 'string' },
    offline: { type: 'boolean' },
    'fetch-optional': { type: 'boolean' },
    force: { type: 'boolean' },
    'no-switch': { type: 'boolean' },
    sources: { type: 'string' },
    json: { type: 'boolean' },
    quiet: { type: 'boolean' },
    ...inputOptions,
  }).values;
  const overrides: Record<string, string> = {};
  for (const name of Object.keys(sources.inputs)) {
    const given = v[name.replaceAll('_', '-')];
    if (typeof given === 'string') overrides[name] = given;
  }
  const json = v.json === true;
  const progress = createProgress({ tty: process.stderr.isTTY === true && !json, quiet: v.quiet === true });
  const onSignal = (signal: NodeJS.Signals): void => {
    discardAllActive();
    process.stderr.write(`\nhpd build: interrupted by ${signal}; no partial build was left and the current build, if any, is unchanged\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const started = performance.now();
  const result = await buildDataset({
    year,
    root: REPO_ROOT,
    buildsRoot: typeof v.out === 'string' ? resolve(v.out) : buildsRoot(),
    cacheDir: cacheRoot(),
    overrides,
    offline: v.offline === true,
    fetchOptional: v['fetch-optional'] === true,
    force: v.force === true,
    makeCurrent: v['no-switch'] !== true,
    sourcesFile,
    progress,
  });
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  const wallSeconds = (performance.now() - started) / 1000;
  const maxRssBytes = process.resourceUsage().maxRSS * 1024;
  const m = result.manifest;
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ ok: true, reused: result.reused, dir: result.dir, wall_seconds: round(wallSeconds), peak_rss_bytes: maxRssBytes, stages: progress.summaries, manifest: m }, null, 2)}\n`,
    );
    return 0;
  }
  const lines = [
    `${result.reused ? 'reused' : 'built'} ${m.year} build ${m.build_hash.slice(0, 12)} in ${wallSeconds.toFixed(1)} s (peak RSS ${(maxRssBytes / 2 ** 20).toFixed(0)} MiB)`,
    `  directory      ${result.dir}`,
    `  data source    ${m.data_source} — ${m.data_freshness}`,
    `  plans          ${m.counts.plans} plans (${m.counts.plan_variants} variants), ${m.counts.issuers} issuers, ${m.counts.states_with_plans} states`,
    `  geography      ${m.counts.zips} ZIPs, ${m.counts.locations} locations, ${m.counts.counties} counties, ${m.counts.rating_areas} rating areas`,
    `  premiums       ${m.counts.premium_pairs} plan × rating-area pairs, ${m.counts.rate_rows} rate rows (${m.premiums.source})`,
    `  crosswalk      ${m.crosswalk === null ? 'none (no crosswalk input)' : `${m.crosswalk.source_year}→${m.crosswalk.target_year}, ${m.crosswalk.rows} rows`}`,
  ];
  for (const i of m.inputs) {
    if (i.rows_read === null) continue;
    lines.push(
      `  ${i.name.padEnd(26)} ${String(i.rows_read).padStart(9)} rows, ${i.rows_rejected} rejected, ${i.rows_ignored} out of scope`,
    );
  }
  lines.push(`  warnings       ${m.warnings.count}${m.warnings.kept.length > 0 ? ' (see manifest.json; first below)' : ''}`);
  for (const w of m.warnings.kept.slice(0, 5)) lines.push(`    ${w}`);
  if (v['no-switch'] === true) {
    const h = m.build_hash.slice(0, 12);
    lines.push(`  not current    compare: hpd builds diff ${m.year}:${h} ${m.year}; switch: hpd builds use ${m.year} ${h}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

export { FatalBuildError, DIAGNOSTIC_CODES };
