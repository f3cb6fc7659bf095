/**
 * @module The request list of the A/B response comparison (bench/ab-responses.ts), drawn
 * deterministically (seeded PRNG) from the builds both servers serve: every endpoint, every key tier
 * (so that 401s and 402s are compared too), the spellings a client may use (aliases, `ages` written with
 * `,`, `%2C`, `%2c` or repeated), refusals, HEAD, conditional requests and compressed answers.
 *
 * Some cases are walks whose later requests depend on the answer a side gave (the next page's cursor,
 * the ETag to revalidate): each side follows its own answers, so a difference in a cursor or an ETag
 * shows as a difference in the following requests too.
 */
import type { ZipLocation } from '../../src/engine/dataset.ts';
import type { DataRegistry, YearData } from '../../src/operations/data-registry.ts';
import { int, pick, prng } from './util.ts';
import { searchableZips } from './workloads.ts';

/** Which key the request carries: one of the three tiers, none, or one the server never issued. */
export type KeyName = 'enterprise' | 'pro' | 'free' | 'none' | 'unknown';

export interface AbRequest {
  readonly method: 'GET' | 'HEAD';
  /** Path and query string. */
  readonly path: string;
  readonly key: KeyName;
  /** Sent as Accept-Encoding; absent: `identity`. */
  readonly acceptEncoding?: string;
}

/**
 * What follows the first request: `pages` — the next_cursor of each page, `n` more pages (fewer when
 * the list ends); `revalidate` — the same request with If-None-Match set to the ETag received
 * (`stale`: an ETag the server never gave, which must get the full answer).
 */
export type FollowUp = { readonly kind: 'pages'; readonly n: number } | { readonly kind: 'revalidate'; readonly stale: boolean };

export interface AbCase {
  readonly first: AbRequest;
  readonly follow?: FollowUp;
}

interface Place {
  readonly yd: YearData;
  readonly zip: string;
  readonly loc: ZipLocation;
  /** Whether `loc` is not the ZIP's primary location (the request then names its county). */
  readonly secondary: boolean;
}

const METALS = ['bronze', 'expanded_bronze', 'silver', 'gold', 'platinum', 'catastrophic'];
const TYPES = ['hmo', 'ppo', 'epo', 'pos'];
const SCENARIOS = ['low', 'medium', 'high', 'having_baby', 'having_diabetes'];
const ENCODINGS = ['br', 'gzip', 'gzip, deflate, br', 'br;q=0.5, gzip'];
/** Federal poverty guideline of the 48 states, household of one and each further member (PY2025 credits). */
const FPL_BASE = 15_060;
const FPL_STEP = 5_380;

type Pair = readonly [string, string | number | boolean];

function qs(params: readonly Pair[]): string {
  return params.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&');
}

/** `ages` spelled one of the ways a client may: comma, `%2C`, `%2c`, or the parameter repeated. */
function agesParam(rand: () => number, ages: ReadonlyArray<number | string>, name = 'ages'): string {
  const r = rand();
  if (r < 0.4) return `${name}=${ages.join(',')}`;
  if (r < 0.6) return `${name}=${ages.join('%2C')}`;
  if (r < 0.75) return `${name}=${ages.join('%2c')}`;
  return ages.map((a) => `${name}=${a}`).join('&');
}

function household(rand: () => number, members: number): number[] {
  const ages = [int(rand, 21, 64)];
  if (members > 1) ages.push(int(rand, 21, 64));
  while (ages.length < members) ages.push(int(rand, 0, 20));
  return ages;
}

/** An income from below 100 % to above 400 % of the poverty guideline for the household size. */
function income(rand: () => number, size: number): number {
  const fpl = FPL_BASE + FPL_STEP * (size - 1);
  return Math.round((fpl * (0.6 + rand() * 5.4)) / 100) * 100;
}

/** Draws `count` cases from the builds of `registry` with `seed`. */
export function abCases(registry: DataRegistry, count: number, seed: number): AbCase[] {
  const rand = prng(seed);
  const current = Math.max(...registry.years);
  const years = registry.years.map((y) => {
    const yd = registry.get(y)!;
    return { yd, zips: searchableZips(yd) };
  });
  const withZips = years.filter((y) => y.zips.length > 0);
  if (withZips.length === 0) throw new Error('no build with a ZIP that lists plans: nothing to compare');
  const currentYear = withZips.find((y) => y.yd.year === current) ?? withZips[withZips.length - 1]!;

  /** A place to price: mostly the current year, sometimes another loaded year (then `year` is sent). */
  const place = (): Place => {
    const y = rand() < 0.85 ? currentYear : pick(rand, withZips);
    const { zip, locations } = pick(rand, y.zips);
    const secondary = locations.length > 1 && rand() < 0.4;
    return { yd: y.yd, zip, loc: secondary ? locations[1]! : locations[0]!, secondary };
  };
  const placeParams = (p: Place): Pair[] => [
    ['zip', p.zip],
    ...(p.secondary ? [['county_fips', p.loc.countyFips] as const] : []),
    ...(p.yd.year === current ? [] : [['year', p.yd.year] as const]),
  ];
  /** A plan sold at the place. */
  const planAt = (p: Place) => p.yd.ds.plan(p.yd.ds.listPlan(p.loc.listId, int(rand, 0, p.yd.ds.listSize(p.loc.listId) - 1)));
  /** A variant of the plan that exists: mostly the on-exchange -01, also CSR and off-exchange ones. */
  const variant = (yd: YearData, scid: string) => {
    const id = `${scid}-${rand() < 0.75 ? '01' : pick(rand, ['00', '02', '03', '04', '05', '06'])}`;
    return yd.ds.planRecord(id) === undefined ? `${scid}-01` : id;
  };
  const yearSuffix = (p: Place, sep: '?' | '&') => (p.yd.year === current ? '' : `${sep}year=${p.yd.year}`);

  /** A plan search: filters, sorts, pages and the aliases page_size, sort and order. */
  const search = (p: Place, ages: readonly number[] | null): string => {
    const q: Pair[] = placeParams(p);
    const r = rand();
    if (r < 0.35) {
      // the plain first page
    } else if (r < 0.45) q.push(['metal_level', pick(rand, METALS)]);
    else if (r < 0.52) q.push(['plan_type', pick(rand, TYPES)]);
    else if (r < 0.64) {
      q.push([rand() < 0.5 ? 'sort_by' : 'sort', pick(rand, ['premium', 'deductible', 'max_oop', 'name'])]);
      if (rand() < 0.5) q.push([rand() < 0.5 ? 'sort_order' : 'order', pick(rand, ['asc', 'desc'])]);
    } else if (r < 0.7) q.push([rand() < 0.5 ? 'sort_order' : 'order', 'desc']);
    else if (r < 0.77) q.push(['page', int(rand, 2, 4)]);
    else if (r < 0.85) q.push([rand() < 0.5 ? 'per_page' : 'page_size', pick(rand, [1, 5, 10, 50, 100])]);
    else if (r < 0.93) {
      const f = rand();
      if (f < 0.25) q.push(['hsa_eligible', rand() < 0.5]);
      else if (f < 0.5) q.push(['max_premium', pick(rand, [300, 450, 600, 800, 1500])]);
      else if (f < 0.75) q.push(['max_deductible', pick(rand, [0, 1000, 3000, 6000])]);
      else {
        const name = planAt(p).issuer;
        q.push(['issuer', (name.split(/[^A-Za-z]+/).find((w) => w.length >= 4) ?? name.slice(0, 4)).toLowerCase()]);
      }
    } else {
      const size = Math.max(1, (ages?.length ?? 1) + (rand() < 0.3 ? 1 : 0));
      q.push(['income', income(rand, size)], ['household_size', size]);
    }
    const head = `/v1/health/plans?${qs(q)}`;
    return ages === null ? `${head}&age=${int(rand, 0, 65)}` : `${head}&${agesParam(rand, ages)}`;
  };

  const generators: ReadonlyArray<readonly [number, () => AbCase]> = [
    // Single-age search.
    [20, () => ({ first: get(search(place(), null)) })],
    // Household search, `ages` in every spelling.
    [9, () => ({ first: get(search(place(), household(rand, int(rand, 1, 6)))) })],
    // A cursor walk: page 1, then the next_cursor of each page for three more.
    [
      6,
      () => {
        const p = place();
        const q: Pair[] = [...placeParams(p), [rand() < 0.5 ? 'per_page' : 'page_size', pick(rand, [2, 5, 10, 25])]];
        if (rand() < 0.5) q.push([rand() < 0.5 ? 'sort_by' : 'sort', pick(rand, ['premium', 'deductible', 'max_oop', 'name'])]);
        if (rand() < 0.3) q.push(['order', 'desc']);
        const who = rand() < 0.5 ? `age=${int(rand, 0, 64)}` : agesParam(rand, household(rand, int(rand, 1, 4)));
        return { first: get(`/v1/health/plans?${qs(q)}&${who}`), follow: { kind: 'pages', n: 3 } };
      },
    ],
    // Plan detail, sometimes priced for an age or a household with the credit.
    [
      8,
      () => {
        const p = place();
        const plan = planAt(p);
        const id = rand() < 0.1 ? plan.standardComponentId : variant(p.yd, plan.standardComponentId);
        const r = rand();
        if (r < 0.6) return { first: get(`/v1/health/plans/${id}${yearSuffix(p, '?')}`) };
        const q = qs(placeParams(p));
        if (r < 0.8) return { first: get(`/v1/health/plans/${id}?${q}&age=${int(rand, 0, 64)}`) };
        const ages = household(rand, int(rand, 1, 5));
        return {
          first: get(
            `/v1/health/plans/${id}?${q}&${agesParam(rand, ages)}&income=${income(rand, ages.length)}&household_size=${ages.length}`,
          ),
        };
      },
    ],
    // APTC for households of 1–6 members, incomes from below 100 % to above 400 % FPL.
    [
      9,
      () => {
        const p = place();
        const ages = household(rand, int(rand, 1, 6));
        const size = Math.min(20, ages.length + (rand() < 0.3 ? 1 : 0));
        const inc = rand() < 0.2 ? 'income' : 'household_income';
        return {
          first: get(
            `/v1/health/plans/aptc-estimate?${qs([...placeParams(p), [inc, income(rand, size)], ['household_size', size]])}&${agesParam(rand, ages)}`,
          ),
        };
      },
    ],
    // Stats of a search.
    [
      5,
      () => {
        const p = place();
        const q: Pair[] = placeParams(p);
        if (rand() < 0.3) q.push(['metal_level', pick(rand, METALS)]);
        if (rand() < 0.2) q.push(['plan_type', pick(rand, TYPES)]);
        const who = rand() < 0.7 ? `age=${int(rand, 0, 64)}` : agesParam(rand, household(rand, int(rand, 1, 4)));
        return { first: get(`/v1/health/plans/stats?${qs(q)}&${who}`) };
      },
    ],
    // Compare 2–4 plans of a place.
    [
      5,
      () => {
        const p = place();
        const ids = Array.from({ length: int(rand, 2, 4) }, () => variant(p.yd, planAt(p).standardComponentId));
        const who =
          rand() < 0.7
            ? `age=${int(rand, 0, 64)}`
            : (() => {
                const ages = household(rand, int(rand, 1, 4));
                return `${agesParam(rand, ages)}&income=${income(rand, ages.length)}&household_size=${ages.length}`;
              })();
        return { first: get(`/v1/health/plans/compare?${agesParam(rand, ids, 'ids')}&${qs(placeParams(p))}&${who}`) };
      },
    ],
    // Out-of-pocket estimate.
    [
      5,
      () => {
        const p = place();
        const who = rand() < 0.75 ? `age=${int(rand, 0, 64)}` : agesParam(rand, household(rand, int(rand, 1, 4)));
        return {
          first: get(
            `/v1/health/plans/${variant(p.yd, planAt(p).standardComponentId)}/oop-estimate?${qs([...placeParams(p), ['scenario', pick(rand, SCENARIOS)]])}&${who}`,
          ),
        };
      },
    ],
    // ICHRA affordability.
    [
      4,
      () => {
        const p = place();
        const q: Pair[] = [
          ...placeParams(p),
          ['age', int(rand, 18, 65)],
          [rand() < 0.2 ? 'income' : 'household_income', income(rand, 1)],
          ['hra_monthly', pick(rand, [0, 50, 125.5, 300, 450, 900])],
        ];
        return { first: get(`/v1/health/ichra/affordability?${qs(q)}`) };
      },
    ],
    // Dental search and detail.
    [
      4,
      () => {
        const p = place();
        const q: Pair[] = [...placeParams(p), ['age', int(rand, 0, 65)]];
        if (rand() < 0.3) q.push([rand() < 0.5 ? 'per_page' : 'page_size', pick(rand, [1, 5, 50])]);
        if (rand() < 0.2) q.push(['page', 2]);
        return { first: get(`/v1/health/dental/plans?${qs(q)}`) };
      },
    ],
    [
      2,
      () => {
        const p = place();
        const offered = p.yd.ds.dental().offeredAt(p.loc.countyFips, p.zip);
        const id = offered.length === 0 ? `${planAt(p).standardComponentId}-01` : pick(rand, offered).id;
        return { first: get(`/v1/health/dental/plans/${rand() < 0.15 ? id.slice(0, 14) : id}${yearSuffix(p, '?')}`) };
      },
    ],
    // Crosswalk of a plan of a loaded year (answered, not covered, or not loaded).
    [
      3,
      () => {
        const y = pick(rand, years);
        const ids = y.yd.ds.planIds();
        const scid = ids.length === 0 ? '12345FL0010001' : pick(rand, ids);
        return {
          first: get(
            `/v1/health/plans/crosswalk?${qs([
              ['plan_id', scid],
              ['year', y.yd.year],
              ['state', scid.slice(5, 7)],
            ])}`,
          ),
        };
      },
    ],
    // ZIP lookups, both paths, any ZIP (with and without plan data).
    [
      4,
      () => {
        const p = place();
        const zip = rand() < 0.7 ? p.zip : String(int(rand, 0, 99_999)).padStart(5, '0');
        return { first: get(`/v1/health/${rand() < 0.7 ? 'zips' : 'zip'}/${zip}${yearSuffix(p, '?')}`) };
      },
    ],
    // Issuers of a state.
    [
      3,
      () => {
        const p = place();
        const state = rand() < 0.8 ? p.loc.state : pick(rand, ['CA', 'NY', 'DC', 'PR', 'ZZ', 'fl']);
        return { first: get(`/v1/health/issuers?state=${state}${yearSuffix(p, '&')}`) };
      },
    ],
    // Years.
    [1, () => ({ first: get('/v1/health/years') })],
    // Refusals: 400s, 404s (unknown ZIPs, plans and paths), 402s (a free key on Pro), 401s.
    [
      10,
      () => {
        const p = place();
        const zq = qs(placeParams(p));
        const plan = planAt(p).standardComponentId;
        const bad: Array<() => AbCase> = [
          () => ({ first: get(`/v1/health/plans?zip=${pick(rand, ['abc', '1234', '123456', ''])}&age=30`) }),
          () => ({ first: get(`/v1/health/plans?${zq}&age=${pick(rand, [-1, 200, 'x', 30.5])}`) }),
          () => ({ first: get(`/v1/health/plans?${zq}&agee=30`) }),
          () => ({ first: get(`/v1/health/plans?${zq}`) }),
          () => ({ first: get(`/v1/health/plans?${zq}&age=30&ages=30,31`) }),
          () => ({ first: get(`/v1/health/plans?${zq}&age=30&per_page=${pick(rand, [0, 101, 'ten'])}`) }),
          () => ({ first: get(`/v1/health/plans?${zq}&age=30&sort_by=${pick(rand, ['price', 'PREMIUM'])}`) }),
          () => ({ first: get(`/v1/health/plans?${zq}&age=30&page=2&cursor=abc`) }),
          () => ({ first: get(`/v1/health/plans?${zq}&age=30&cursor=${pick(rand, ['abc', 'eyJ2IjoxfQ', '%%%'])}`) }),
          () => ({ first: get(`/v1/health/plans?${zq}&age=30&income=50000`) }),
          () => ({ first: get(`/v1/health/plans?${zq}&age=30&year=${pick(rand, [2013, 2023, 2031])}`) }),
          () => ({ first: get(`/v1/health/plans?zip=00000&age=30`) }),
          () => ({ first: get(`/v1/health/plans/${pick(rand, ['00000XX0000000-01', 'nope', `${plan}-99`])}`) }),
          () => ({ first: get(`/v1/health/plans/compare?ids=${plan}-01&${zq}&age=30`) }),
          () => ({ first: get(`/v1/health/plans/aptc-estimate?${zq}&household_income=-5&household_size=0&ages=`) }),
          () => ({ first: get(`/v1/health/plans/${plan}-01/oop-estimate?${zq}&age=30&scenario=${pick(rand, ['huge', ''])}`) }),
          () => ({ first: get(`/v1/health/ichra/affordability?${zq}&age=30`) }),
          () => ({ first: get(`/v1/health/plans/crosswalk?plan_id=${plan}&year=2025&state=${pick(rand, ['XX', 'CA', 'ca'])}`) }),
          () => ({ first: get(`/v1/health/issuers`) }),
          () => ({ first: get(`/v1/health/${pick(rand, ['nothing', 'plans/', 'zips/'])}`) }),
          // Pro parameters and endpoints with a free key: 402.
          () => ({ first: { ...get(search(p, household(rand, 2))), key: 'free' } }),
          () => ({ first: { ...get(`/v1/health/plans?${zq}&age=30&sort_by=deductible`), key: 'free' } }),
          () => ({ first: { ...get(`/v1/health/plans/${plan}-01`), key: 'free' } }),
          () => ({
            first: { ...get(`/v1/health/plans/aptc-estimate?${zq}&household_income=40000&household_size=1&ages=40`), key: 'free' },
          }),
          // No key, a key never issued: 401.
          () => ({ first: { ...get(`/v1/health/plans?${zq}&age=30`), key: pick(rand, ['none', 'unknown'] as const) } }),
        ];
        return pick(rand, bad)();
      },
    ],
  ];
  const total = generators.reduce((s, [w]) => s + w, 0);

  const out: AbCase[] = [];
  for (let i = 0; i < count; i++) {
    let x = rand() * total;
    const gen = generators.find(([w]) => (x -= w) < 0)?.[1] ?? generators[0]![1];
    const c = gen();
    out.push(vary(c));
  }
  return out;

  function get(path: string): AbRequest {
    return { method: 'GET', path, key: 'enterprise' };
  }

  /** Another tier, HEAD, compression or a conditional repeat on some of the cases. */
  function vary(c: AbCase): AbCase {
    if (c.follow !== undefined || c.first.key !== 'enterprise') return c;
    const r = rand();
    const key: KeyName = r < 0.1 ? 'pro' : r < 0.16 ? 'free' : 'enterprise';
    const first: AbRequest = {
      ...c.first,
      key,
      ...(rand() < 0.06 ? { method: 'HEAD' as const } : {}),
      ...(rand() < 0.15 ? { acceptEncoding: pick(rand, ENCODINGS) } : {}),
    };
    return rand() < 0.08 ? { first, follow: { kind: 'revalidate', stale: rand() < 0.2 } } : { first };
  }
}
