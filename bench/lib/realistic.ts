/**
 * @module The realistic search workload: what a cache in front of search would see from real shoppers,
 * as opposed to the unique-URL mix (bench/lib/workloads.ts) that measures the cost of computing each
 * response.
 *
 * 1. A universe of distinct queries (ZIP, county, age, filters, sort, page), each drawn from
 *    population-like weights: the location with its HUD residential ratio (see {@link weightedLocations}),
 *    the age from an enrollment-like spread, the options from {@link VARIANTS}. Duplicates are dropped, so
 *    the universe's order (the popularity rank) is a weighted random permutation: heavy queries tend
 *    to come first, but not strictly.
 * 2. The replayed sequence: draws of ranks from a Zipf law (probability ∝ 1 / rank^s) over that
 *    universe, so a few queries are very common and most are rare.
 *
 * Both are deterministic (seeded PRNG), so every machine replays the same stream.
 */
import type { ZipLocation } from '../../src/engine/dataset.ts';
import { int, prng } from './util.ts';

/** Zipf exponent. Measured web request popularity has s ≈ 0.6–1.0 (Breslau et al., 1999); 0.9 is in the middle-upper part. */
export const ZIPF_EXPONENT = 0.9;

export interface WeightedLocation {
  readonly zip: string;
  /** Null for the ZIP's primary county (no county_fips parameter needed). */
  readonly countyFips: string | null;
  readonly weight: number;
}

/**
 * One entry per (ZIP, county) with plans, weighted by HUD's residential ratio (the share of the ZIP's
 * residential addresses in that county). No population file is available (../shared/data has none),
 * so this is the proxy: every residential ZIP weighs about the same, a county weighs its number of
 * residential ZIP-equivalents, split ZIPs are split by where their residents live, and business-only
 * or PO-box ZIPs (ratio 0) are never drawn.
 */
export function weightedLocations(zips: ReadonlyArray<{ zip: string; locations: readonly ZipLocation[] }>): WeightedLocation[] {
  const out: WeightedLocation[] = [];
  for (const { zip, locations } of zips) {
    locations.forEach((l, i) => {
      if (l.residentialShare > 0) out.push({ zip, countyFips: i === 0 ? null : l.countyFips, weight: l.residentialShare });
    });
  }
  return out;
}

type Param = readonly [string, string | number | boolean];

/** Options of a search with their share of requests: most shoppers look at page 1, unfiltered. */
export const VARIANTS: ReadonlyArray<{ readonly weight: number; readonly params: readonly Param[] }> = [
  { weight: 40, params: [] },
  { weight: 6, params: [['page', 2]] },
  { weight: 2, params: [['page', 3]] },
  { weight: 8, params: [['metal_level', 'silver']] },
  { weight: 4, params: [['metal_level', 'bronze']] },
  { weight: 4, params: [['metal_level', 'gold']] },
  { weight: 1, params: [['metal_level', 'expanded_bronze']] },
  { weight: 1, params: [['metal_level', 'platinum']] },
  { weight: 1, params: [['metal_level', 'catastrophic']] },
  {
    weight: 2,
    params: [
      ['metal_level', 'silver'],
      ['page', 2],
    ],
  },
  { weight: 2, params: [['plan_type', 'hmo']] },
  { weight: 2, params: [['plan_type', 'ppo']] },
  { weight: 1, params: [['plan_type', 'epo']] },
  { weight: 1, params: [['plan_type', 'pos']] },
  { weight: 4, params: [['sort_by', 'deductible']] },
  { weight: 3, params: [['sort_by', 'max_oop']] },
  { weight: 1, params: [['sort_by', 'name']] },
  { weight: 2, params: [['sort_order', 'desc']] },
  { weight: 3, params: [['per_page', 50]] },
  { weight: 2, params: [['per_page', 100]] },
  { weight: 2, params: [['hsa_eligible', true]] },
  { weight: 2, params: [['max_premium', 450]] },
  { weight: 1, params: [['max_premium', 300]] },
  { weight: 1, params: [['max_premium', 600]] },
  { weight: 1, params: [['max_deductible', 1000]] },
  { weight: 1, params: [['max_deductible', 3000]] },
];

/** Index drawn with probability ∝ weight, from cumulative weights (binary search). */
function weightedPicker(weights: readonly number[]): (rand: () => number) => number {
  const cum = new Float64Array(weights.length);
  let total = 0;
  for (let i = 0; i < weights.length; i++) {
    total += weights[i]!;
    cum[i] = total;
  }
  return (rand) => {
    const x = rand() * total;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
}

/** Shopper ages: 10 % children (0–17); adults 18–64 more likely the older (marketplace enrollment skews older). */
function drawAge(rand: () => number): number {
  if (rand() < 0.1) return int(rand, 0, 17);
  // Density rising linearly from 1 at 18 to 2 at 64: inverse of the CDF of a trapezoid.
  const u = rand();
  const t = -1 + Math.sqrt(1 + 3 * u); // solves (t + t²/2) / 1.5 = u on [0, 1]
  return Math.min(64, 18 + Math.floor(t * 47));
}

export interface RealisticSearch {
  /** Distinct queries, most popular first. */
  readonly universe: readonly string[];
  /** The replayed stream: Zipf draws over the universe. */
  readonly sequence: readonly string[];
  readonly distinctInSequence: number;
  readonly zipfExponent: number;
}

/**
 * The universe of `distinct` queries (fewer if the locations cannot make that many within 50 draws
 * each) and a stream of `length` Zipf draws over it.
 */
export function realisticSearch(locations: readonly WeightedLocation[], distinct: number, length: number, seed = 2026): RealisticSearch {
  if (locations.length === 0) throw new Error('no location with residents and plans to search');
  const rand = prng(seed);
  const pickLocation = weightedPicker(locations.map((l) => l.weight));
  const pickVariant = weightedPicker(VARIANTS.map((v) => v.weight));
  const seen = new Set<string>();
  const universe: string[] = [];
  for (let draws = 0; universe.length < distinct && draws < 50 * distinct; draws++) {
    const loc = locations[pickLocation(rand)]!;
    const params: Param[] = [
      ['zip', loc.zip],
      ['age', drawAge(rand)],
    ];
    if (loc.countyFips !== null) params.push(['county_fips', loc.countyFips]);
    params.push(...VARIANTS[pickVariant(rand)]!.params);
    const url = `/v1/health/plans?${params.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&')}`;
    if (seen.has(url)) continue;
    seen.add(url);
    universe.push(url);
  }
  const pickRank = weightedPicker(universe.map((_, r) => 1 / (r + 1) ** ZIPF_EXPONENT));
  const sequence: string[] = [];
  const used = new Set<number>();
  for (let i = 0; i < length; i++) {
    const r = pickRank(rand);
    used.add(r);
    sequence.push(universe[r]!);
  }
  return { universe, sequence, distinctInSequence: used.size, zipfExponent: ZIPF_EXPONENT };
}

/**
 * Hits of an LRU cache holding `capacity` responses over the requests `from`..`to` (exclusive) of the
 * sequence replayed cyclically, after warming it with the requests before `from`. The estimate used
 * when the server does not count its search cache's hits; it assumes every response has the same size.
 */
export function lruHits(sequence: readonly string[], from: number, to: number, capacity: number): number {
  if (capacity < 1) return 0;
  const lru = new Map<string, true>();
  let hits = 0;
  for (let i = 0; i < to; i++) {
    const url = sequence[i % sequence.length]!;
    const hit = lru.delete(url);
    if (hit && i >= from) hits++;
    lru.set(url, true);
    if (lru.size > capacity) lru.delete(lru.keys().next().value!);
  }
  return hits;
}
