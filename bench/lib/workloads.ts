/**
 * @module The request mixes of the load runs, drawn deterministically (seeded PRNG) from the build
 * being served, so every machine and every run replays the same URLs.
 *
 * - search: ZIPs of every state with plan data, shopper ages (mostly adults, some children), and a
 *   realistic spread of options: most requests plain, others with a metal level or plan type, another
 *   sort (deductible, MOOP, name, descending), a later offset page, another page size, a Pro filter
 *   (issuer, HSA, maximum premium or deductible), a county of a multi-county ZIP, or a keyset cursor
 *   page (the `next_cursor` of page 1, computed through the operation itself).
 * - detail: plan variants of every kind (mostly the on-exchange `-01`, also CSR and off-exchange
 *   variants, and 14-character standard component ids).
 * - household: the search mix with three members instead of one age (two adults and a child under 21,
 *   `ages`), its cursors its own: the same ZIPs and options, priced for a family.
 * - years: the one URL.
 * - aptc: households of one to five members seeking coverage, incomes from 80 % to 600 % FPL or so.
 * - realistic (only when asked for): the search stream a response cache would see, Zipf-distributed
 *   over ≥ 100,000 distinct queries (bench/lib/realistic.ts).
 */
import { NO_LIST } from '../../src/engine/build-format.ts';
import type { ZipLocation } from '../../src/engine/dataset.ts';
import type { YearData } from '../../src/operations/data-registry.ts';
import { executeToBody, type OperationContext } from '../../src/operations/operation.ts';
import { threadScratch } from '../../src/operations/request-scratch.ts';
import { searchPlansOperation } from '../../src/operations/search-plans.ts';
import { realisticSearch, weightedLocations, type RealisticSearch } from './realistic.ts';
import { int, pick, prng } from './util.ts';

export type WorkloadName = 'search' | 'household' | 'detail' | 'years' | 'aptc' | 'realistic';
export const WORKLOADS: readonly WorkloadName[] = ['search', 'household', 'detail', 'years', 'aptc', 'realistic'];

/**
 * The servers of the load runs: ours (`hpd serve`, the search response cache off so that every search
 * is computed), the reference baseline, the bare-uWS ceiling, and ours with the search cache on (its
 * default), which only the realistic workload drives.
 */
export type TargetName = 'ours' | 'baseline' | 'ceiling' | 'ours_cached';
export const TARGETS: readonly TargetName[] = ['ours', 'baseline', 'ceiling', 'ours_cached'];

export interface Workload {
  readonly name: WorkloadName;
  readonly title: string;
  /** Paths with query strings, in replay order. */
  readonly urls: readonly string[];
  /** Whether the baseline implements this endpoint (it has no APTC, no household): its answers are compared with ours. */
  readonly baseline: boolean;
  /** Why the baseline is not loaded with it, when it is not. */
  readonly baselineSkipped?: string;
  /** The targets loaded with it, in the order they alternate. */
  readonly targets: readonly TargetName[];
  /** The URLs fetched and compared before the runs (all of them, or a sample of a large stream). */
  readonly verify: readonly string[];
  /** The realistic stream's make-up. */
  readonly realistic?: Omit<RealisticSearch, 'universe' | 'sequence'> & { readonly universe: number };
}

const SEED = 2025;
const METALS = ['bronze', 'expanded_bronze', 'silver', 'silver', 'gold', 'platinum', 'catastrophic'];
const TYPES = ['hmo', 'ppo', 'epo', 'pos'];

function qs(params: ReadonlyArray<readonly [string, string | number | boolean]>): string {
  return params.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&');
}

/**
 * A search URL asking for the first page of `perPage` plans: its own page size, page number and cursor
 * dropped, so every page size is measured over the same searches (a page number that exists at one
 * size can be past the end at another).
 */
export function withPerPage(url: string, perPage: number): string {
  const q = url.indexOf('?');
  if (q < 0) return `${url}?per_page=${perPage}`;
  const kept = url
    .slice(q + 1)
    .split('&')
    .filter((pair) => !/^(per_page|page_size|page|cursor)=/.test(pair));
  return `${url.slice(0, q)}?${[...kept, `per_page=${perPage}`].join('&')}`;
}

/** ZIPs whose primary location (or at least one location) lists plans, in ZIP order. */
export function searchableZips(yd: YearData): Array<{ zip: string; locations: ZipLocation[] }> {
  const out: Array<{ zip: string; locations: ZipLocation[] }> = [];
  for (let z = 0; z < 100_000; z++) {
    const zip = String(z).padStart(5, '0');
    const locs = yd.ds.resolveZip(zip);
    if (locs === null) continue;
    const usable = locs.filter((l) => l.listId !== NO_LIST && yd.ds.listSize(l.listId) > 0 && yd.statesWithPlans.has(l.state));
    if (usable.length > 0 && usable[0] === locs[0]) out.push({ zip, locations: usable });
  }
  return out;
}

/** Size of the realistic stream: distinct queries and requests replayed. */
export interface RealisticSize {
  readonly distinct: number;
  readonly length: number;
}

const ALL: readonly TargetName[] = ['ours', 'baseline', 'ceiling'];

export function buildWorkloads(yd: YearData, ctx: OperationContext, perWorkload: number, realistic?: RealisticSize): Workload[] {
  const zips = searchableZips(yd);
  if (zips.length === 0) throw new Error(`build ${yd.ds.buildHash.slice(0, 12)} has no ZIP with plans to search`);
  const plain = (name: WorkloadName, title: string, urls: string[], baselineSkipped?: string): Workload => ({
    name,
    title,
    urls,
    baseline: baselineSkipped === undefined,
    ...(baselineSkipped === undefined ? {} : { baselineSkipped }),
    targets: baselineSkipped === undefined ? ALL : ['ours', 'ceiling'],
    verify: [...new Set(urls)],
  });
  const out = [
    plain('search', 'Plan search (mixed ZIPs, ages, filters, sorts, pages)', searchUrls(yd, ctx, zips, perWorkload, false)),
    plain(
      'household',
      'Plan search for three-member households (the search mix, ages instead of age)',
      searchUrls(yd, ctx, zips, perWorkload, true),
      'the baseline (reference architecture replica) prices one age only',
    ),
    plain('detail', 'Plan detail', detailUrls(yd, perWorkload)),
    plain('years', 'Available years', ['/v1/health/years']),
    plain(
      'aptc',
      'APTC estimate (1–5 members)',
      aptcUrls(zips, perWorkload),
      'the baseline (reference architecture replica) has no APTC endpoint',
    ),
  ];
  if (realistic !== undefined) out.push(realisticWorkload(zips, realistic));
  return out;
}

/** Verified before the runs: the most popular queries and a spread of the rest. */
const REALISTIC_VERIFIED = 60;

function realisticWorkload(zips: ReadonlyArray<{ zip: string; locations: ZipLocation[] }>, size: RealisticSize): Workload {
  const r = realisticSearch(weightedLocations(zips), size.distinct, size.length);
  const step = Math.max(1, Math.floor(r.universe.length / REALISTIC_VERIFIED));
  const verify = [
    ...new Set([
      ...r.universe.slice(0, REALISTIC_VERIFIED / 2),
      ...r.universe.filter((_, i) => i % step === step - 1).slice(0, REALISTIC_VERIFIED / 2),
    ]),
  ];
  return {
    name: 'realistic',
    title: `Plan search, realistic: Zipf (s = ${r.zipfExponent}) over ${r.universe.length.toLocaleString('en-US')} distinct queries, ZIPs weighted by HUD residential ratio`,
    urls: r.sequence,
    baseline: true,
    targets: ['ours', 'ours_cached'],
    verify,
    realistic: { universe: r.universe.length, distinctInSequence: r.distinctInSequence, zipfExponent: r.zipfExponent },
  };
}

function searchUrls(
  yd: YearData,
  ctx: OperationContext,
  zips: ReadonlyArray<{ zip: string; locations: ZipLocation[] }>,
  n: number,
  household: boolean,
): string[] {
  const rand = prng(SEED);
  // Its own stream for the family members, so the household mix draws the same ZIPs and options.
  const family = prng(SEED + 3);
  const urls: string[] = [];
  for (let i = 0; i < n; i++) {
    const { zip, locations } = pick(rand, zips);
    const age = rand() < 0.1 ? int(rand, 0, 17) : int(rand, 18, 64);
    const p: Array<[string, string | number | boolean]> = [['zip', zip]];
    if (household) {
      const adult = Math.max(21, age);
      p.push(['ages', `${adult},${Math.min(64, Math.max(21, adult + int(family, -5, 5)))},${int(family, 0, 20)}`]);
    } else p.push(['age', age]);
    const loc = locations.length > 1 && rand() < 0.5 ? locations[1]! : locations[0]!;
    if (loc !== locations[0]) p.push(['county_fips', loc.countyFips]);
    const r = rand();
    if (r < 0.45) {
      // plain first page
    } else if (r < 0.57) p.push(['metal_level', pick(rand, METALS)]);
    else if (r < 0.65) p.push(['plan_type', pick(rand, TYPES)]);
    else if (r < 0.75) {
      p.push(['sort_by', pick(rand, ['deductible', 'max_oop', 'name'])]);
      if (rand() < 0.4) p.push(['sort_order', 'desc']);
    } else if (r < 0.78) p.push(['sort_order', 'desc']);
    else if (r < 0.85) p.push(['page', int(rand, 2, 3)]);
    else if (r < 0.89) p.push(['per_page', pick(rand, [10, 50, 100])]);
    else if (r < 0.95) {
      const f = rand();
      if (f < 0.25) p.push(['hsa_eligible', rand() < 0.5]);
      else if (f < 0.5) p.push(['max_premium', pick(rand, [300, 450, 600, 800])]);
      else if (f < 0.75) p.push(['max_deductible', pick(rand, [1000, 3000, 6000])]);
      else {
        const issuer = yd.ds.plan(yd.ds.listPlan(loc.listId, int(rand, 0, yd.ds.listSize(loc.listId) - 1))).issuer;
        const word = issuer.split(/[^A-Za-z]+/).find((w) => w.length >= 4) ?? issuer.slice(0, 4);
        p.push(['issuer', word.toLowerCase()]);
      }
    } else {
      // A keyset page: the cursor our server hands out with page 1 of this query.
      if (rand() < 0.5) p.push(['sort_by', pick(rand, ['premium', 'deductible', 'name'])]);
      const first = executeToBody(
        searchPlansOperation,
        ctx,
        'enterprise',
        p.map(([k, v]) => [k, String(v)] as const),
        {},
        threadScratch(),
      );
      if (first.ok && typeof first.body.next_cursor === 'string') p.push(['cursor', first.body.next_cursor]);
    }
    urls.push(`/v1/health/plans?${qs(p)}`);
  }
  return urls;
}

function detailUrls(yd: YearData, n: number): string[] {
  const rand = prng(SEED + 1);
  const ids = yd.ds.planIds();
  const urls: string[] = [];
  while (urls.length < n) {
    const scid = pick(rand, ids);
    const r = rand();
    if (r < 0.05) {
      urls.push(`/v1/health/plans/${scid}`);
      continue;
    }
    const variant = r < 0.75 ? '01' : pick(rand, ['00', '02', '03', '04', '05', '06']);
    if (yd.ds.planRecord(`${scid}-${variant}`) === undefined) continue;
    urls.push(`/v1/health/plans/${scid}-${variant}`);
  }
  return urls;
}

function aptcUrls(zips: ReadonlyArray<{ zip: string; locations: ZipLocation[] }>, n: number): string[] {
  const rand = prng(SEED + 2);
  const urls: string[] = [];
  for (let i = 0; i < n; i++) {
    const { zip } = pick(rand, zips);
    const members = rand() < 0.5 ? 1 : int(rand, 2, 5);
    const size = Math.min(20, members + (rand() < 0.3 ? 1 : 0));
    const ages = [int(rand, 21, 64)];
    if (members > 1) ages.push(int(rand, 21, 64));
    while (ages.length < members) ages.push(int(rand, 0, 20));
    const income = int(rand, 12, 150) * 1000;
    urls.push(
      `/v1/health/plans/aptc-estimate?${qs([
        ['zip', zip],
        ['household_income', income],
        ['household_size', size],
      ])}&ages=${ages.join(',')}`,
    );
  }
  return urls;
}
