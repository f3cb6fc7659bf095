/**
 * @module The baseline: a replica of the reference architecture, Hono routes over SQLite.
 *
 * It answers plan search, plan detail and the years list with the same JSON bodies as our server
 * (the harness checks that field by field), computing them the way the reference does: authenticate
 * with a prepared API-key lookup by SHA-256, count the daily quota in memory, resolve the ZIP with an
 * indexed query, then one indexed SQL query for the page and one for the total, with the filters and
 * the sort in SQL. Statements are prepared once and cached by their SQL text. It has no APTC, no
 * compare and no OOP estimate: the load runs exercise those on our server and the ceiling only.
 */
import { createHash } from 'node:crypto';
import { fastHash } from '../../src/encoding/fast-hash.ts';
import type { Database, Statement } from 'better-sqlite3';
import { Hono, type Context } from 'hono';
import { cors } from 'hono/cors';
import { requestId } from 'hono/request-id';
import { NO_TOBACCO } from './schema.ts';

type Row = Record<string, unknown>;
type Env = { Variables: { tier: string } };

const KEY = /^hpd_[0-9a-f]{40}$/;
const STANDARD_COMPONENT_ID = /^\d{5}[A-Z]{2}\d{7}$/;
const PLAN_VARIANT_ID = /^(\d{5}[A-Z]{2}\d{7})-(\d{2})$/;
const METALS = new Set(['bronze', 'expanded_bronze', 'expanded bronze', 'silver', 'gold', 'platinum', 'catastrophic']);
const PLAN_TYPES = new Set(['hmo', 'ppo', 'epo', 'pos', 'indemnity']);
const SORTS: Readonly<Record<string, string>> = {
  premium: 'r.premium',
  deductible: 'p.deductible_individual',
  max_oop: 'p.moop_individual',
  name: 'p.name_rank',
};
/** Search parameters in documentation order (links echo them in this order). */
const SEARCH_ORDER = [
  'zip',
  'age',
  'year',
  'county_fips',
  'metal_level',
  'plan_type',
  'issuer',
  'hsa_eligible',
  'max_premium',
  'max_deductible',
  'sort_by',
  'sort_order',
  'cursor',
  'page',
  'per_page',
  'income',
  'household_size',
];
const SEARCH_ALIASES: Readonly<Record<string, string>> = { page_size: 'per_page', sort: 'sort_by', order: 'sort_order' };
const TIER_LIMITS: Readonly<Record<string, number>> = { free: 100, pro: 10_000, enterprise: 100_000 };
const DAY_MS = 86_400_000;

export interface BaselineConfig {
  readonly db: Database;
  readonly baseUrl: string;
  /** Daily limits by tier (the same environment variables as our server). */
  readonly limits?: Readonly<Record<string, number>>;
}

class HttpProblem extends Error {
  readonly status: number;
  readonly detail: string;
  constructor(status: number, detail: string) {
    super(detail);
    this.status = status;
    this.detail = detail;
  }
}

const bad = (field: string, message: string): HttpProblem => new HttpProblem(400, `${field}: ${message}`);

function encodeValue(v: string): string {
  return encodeURIComponent(v).replaceAll('%2C', ',');
}

function echo(raw: ReadonlyMap<string, string>, skip: ReadonlySet<string>, extra: ReadonlyArray<readonly [string, string]> = []): string {
  const parts: string[] = [];
  for (const k of SEARCH_ORDER) {
    const v = raw.get(k);
    if (v !== undefined && !skip.has(k)) parts.push(`${k}=${encodeValue(v)}`);
  }
  for (const [k, v] of extra) parts.push(`${k}=${encodeValue(v)}`);
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

function int(raw: ReadonlyMap<string, string>, name: string, min: number, max: number): number | undefined {
  const v = raw.get(name);
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw bad(name, 'Expected integer');
  const n = Number(v);
  if (n < min || n > max) throw bad(name, `Must be between ${min} and ${max}`);
  return n;
}

function num(raw: ReadonlyMap<string, string>, name: string): number | undefined {
  const v = raw.get(name);
  if (v === undefined) return undefined;
  if (!/^(\d+\.?\d*|\.\d+)$/.test(v)) throw bad(name, 'Expected number');
  return Number(v);
}

function oneOf(raw: ReadonlyMap<string, string>, name: string, allowed: ReadonlySet<string>): string | undefined {
  const v = raw.get(name);
  if (v !== undefined && !allowed.has(v)) throw bad(name, 'Invalid enum value');
  return v;
}

export function createBaselineApp(config: BaselineConfig): Hono<Env> {
  const { db, baseUrl } = config;
  const limits = config.limits ?? TIER_LIMITS;
  const meta = new Map(
    (db.prepare('SELECT key, value FROM meta').all() as Array<{ key: string; value: string }>).map((r) => [r.key, r.value]),
  );
  const buildHash = meta.get('build_hash')!;
  const dataSource = meta.get('data_source')!;
  const dataFreshness = meta.get('data_freshness')!;
  const currentYear = (db.prepare('SELECT MAX(year) AS y FROM plan_years').get() as { y: number }).y;

  const keyByHash = db.prepare(
    'SELECT k.user_id AS user_id, u.tier AS tier FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ? AND k.revoked_at IS NULL',
  );
  const yearExists = db.prepare('SELECT 1 FROM plan_years WHERE year = ?').pluck();
  const allYears = db.prepare('SELECT year FROM plan_years ORDER BY year').pluck();
  const statesOfYear = db.prepare('SELECT DISTINCT state FROM plans WHERE year = ? ORDER BY state').pluck();
  const locationsOfZip = db.prepare(
    'SELECT state, county_fips, county_name, rating_area, rating_area_id, plan_list FROM zip_locations WHERE zip = ? ORDER BY ord',
  );
  const planById = db.prepare('SELECT * FROM plans WHERE id = ? AND year = ?');
  const statements = new Map<string, Statement>();
  const prepared = (sql: string): Statement => {
    let s = statements.get(sql);
    if (s === undefined) statements.set(sql, (s = db.prepare(sql)));
    return s;
  };

  // Daily quota per user, in memory (ours keeps it in memory too and persists in the background).
  let day = Math.floor(Date.now() / DAY_MS);
  const used = new Map<string, number>();

  const app = new Hono<Env>();
  app.use('*', requestId());
  app.use('*', cors({ origin: '*', exposeHeaders: ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] }));
  app.onError((err, c) => {
    if (err instanceof HttpProblem) return problem(c, err.status, err.detail);
    process.stderr.write(`baseline: ${err.stack ?? err.message}\n`);
    return problem(c, 500, 'An unexpected error occurred.');
  });
  app.notFound((c) => problem(c, 404, `No route matches ${c.req.path}.`));

  app.use('/v1/health/*', async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!KEY.test(token)) return problem(c, 401, 'Missing or invalid API key.');
    const who = keyByHash.get(createHash('sha256').update(token).digest('hex')) as { user_id: string; tier: string } | undefined;
    if (who === undefined) return problem(c, 401, 'Missing or invalid API key.');
    const now = Date.now();
    const today = Math.floor(now / DAY_MS);
    if (today !== day) {
      day = today;
      used.clear();
    }
    const limit = limits[who.tier] ?? 0;
    const count = used.get(who.user_id) ?? 0;
    c.header('RateLimit-Limit', String(limit));
    c.header('RateLimit-Reset', String(((today + 1) * DAY_MS) / 1000));
    if (count >= limit) {
      c.header('RateLimit-Remaining', '0');
      return problem(c, 429, 'Daily request limit reached. Resets at midnight UTC.');
    }
    used.set(who.user_id, count + 1);
    c.header('RateLimit-Remaining', String(limit - count - 1));
    c.set('tier', who.tier);
    await next();
  });

  const yearOf = (raw: ReadonlyMap<string, string>): number => {
    const year = int(raw, 'year', 2014, 2030) ?? currentYear;
    if (yearExists.get(year) === undefined) throw bad('year', `Year ${year} is not available`);
    return year;
  };

  app.get('/v1/health/years', (c) => {
    const years = allYears.all() as number[];
    return c.json({
      _links: { self: { href: `${baseUrl}/v1/health/years`, type: 'application/json' } },
      current_year: years.at(-1),
      available_years: years,
      // One build: its premiums are all real or all modeled.
      years: years.map((year) => {
        const states = statesOfYear.all(year) as string[];
        const modeled = dataSource.includes('modeled');
        return { year, states, real_premium_states: modeled ? [] : states, modeled_premium_states: modeled ? states : [] };
      }),
    });
  });

  app.get('/v1/health/plans', (c) => c.json(search(c)));

  app.get('/v1/health/plans/:plan_id', (c) => {
    const raw = rawQuery(c, {});
    const year = yearOf(raw);
    const given = c.req.param('plan_id');
    const id = STANDARD_COMPONENT_ID.test(given) ? `${given}-01` : given;
    const r = PLAN_VARIANT_ID.test(id) ? (planById.get(id, year) as Row | undefined) : undefined;
    if (r === undefined) throw new HttpProblem(404, `Plan ${given} not found.`);
    const d = JSON.parse(r.deductible_json as string) as Record<string, number | null>;
    const m = JSON.parse(r.moop_json as string) as Record<string, number | null>;
    const sbc = JSON.parse(r.sbc_json as string) as Record<string, Record<string, number | null>>;
    const tiers = (t: Record<string, number | null>) => ({
      individual_tier1: t.individual_tier1,
      individual_tier2: t.individual_tier2,
      family_tier1: t.family_tier1,
      family_tier2: t.family_tier2,
      individual_oon: t.individual_oon,
      family_oon: t.family_oon,
    });
    const scenario = (s: Record<string, number | null>) => ({
      deductible: s.deductible,
      copayment: s.copayment,
      coinsurance: s.coinsurance,
      limit: s.limit,
      total: s.total,
    });
    return c.json({
      _links: {
        self: { href: `${baseUrl}/v1/health/plans/${r.id}?year=${year}`, type: 'application/json' },
        collection: { href: `${baseUrl}/v1/health/plans{?zip,age,year}`, templated: true },
      },
      id: r.id,
      standard_component_id: r.standard_component_id,
      name: r.name,
      ...issuerOf(r),
      state: r.state,
      metal_level: r.metal_level,
      plan_type: r.plan_type,
      service_area_id: r.service_area_id,
      hsa_eligible: r.hsa_eligible === 1,
      national_network: r.national_network === 1,
      deductible: tiers(d),
      max_out_of_pocket: { ...tiers(m), combined_individual: m.combined_individual, combined_family: m.combined_family },
      sbc_scenarios: {
        having_baby: scenario(sbc.having_baby!),
        having_diabetes: scenario(sbc.having_diabetes!),
        simple_fracture: scenario(sbc.simple_fracture!),
      },
      links: linksOf(r),
      issuer_id: r.issuer_id,
      csr_variation: r.csr_variation,
      network_id: r.network_id,
      formulary_id: r.formulary_id,
      referral_required_for_specialist: r.referral_required_for_specialist === 1,
      out_of_country_coverage: r.out_of_country_coverage === 1,
      out_of_service_area_coverage: r.out_of_service_area_coverage === 1,
      plan_year: year,
      data_source: dataSource,
      data_freshness: dataFreshness,
    });
  });

  function rawQuery(c: Context<Env>, aliases: Readonly<Record<string, string>>): Map<string, string> {
    const raw = new Map<string, string>();
    for (const [k, value] of Object.entries(c.req.query())) {
      const v = value.trim();
      if (v === '') continue;
      const canonical = aliases[k] ?? k;
      if (raw.has(canonical) && raw.get(canonical) !== v) throw bad(k, `Conflicts with ${canonical}`);
      raw.set(canonical, v);
    }
    return raw;
  }

  function search(c: Context<Env>): Record<string, unknown> {
    const raw = rawQuery(c, SEARCH_ALIASES);
    const zip = raw.get('zip');
    if (zip === undefined || !/^\d{5}$/.test(zip)) throw bad('zip', 'Required, 5 digits');
    const age = int(raw, 'age', 0, 65);
    if (age === undefined) throw bad('age', 'Required');
    const year = yearOf(raw);
    const countyFips = raw.get('county_fips');
    const metalParam = oneOf(raw, 'metal_level', METALS);
    const planType = oneOf(raw, 'plan_type', PLAN_TYPES);
    const issuer = raw.get('issuer');
    const hsaText = oneOf(raw, 'hsa_eligible', new Set(['true', 'false']));
    const hsa = hsaText === undefined ? undefined : hsaText === 'true';
    const maxPremium = num(raw, 'max_premium');
    const maxDeductible = num(raw, 'max_deductible');
    const sortBy = oneOf(raw, 'sort_by', new Set(Object.keys(SORTS))) ?? 'premium';
    const sortOrder = oneOf(raw, 'sort_order', new Set(['asc', 'desc'])) ?? 'asc';
    const page = int(raw, 'page', 1, Number.MAX_SAFE_INTEGER) ?? 1;
    const perPage = int(raw, 'per_page', 1, 100) ?? 25;
    const cursor = raw.get('cursor');
    if (raw.has('income') || raw.has('household_size')) throw bad('income', 'Not supported by this server');
    if (cursor !== undefined && page > 1) throw bad('page', 'Must not be given with cursor');

    const locations = locationsOfZip.all(zip) as Row[];
    if (locations.length === 0) throw new HttpProblem(404, `ZIP code ${zip} not found.`);
    const loc = countyFips === undefined ? locations[0] : locations.find((l) => l.county_fips === countyFips);
    if (loc === undefined) throw bad('county_fips', `County ${countyFips} is not part of ZIP ${zip}`);
    if (loc.plan_list === null) throw new HttpProblem(404, `No plan data for ${String(loc.state)} in ${year}.`);

    const metal = metalParam?.replace('_', ' ');
    // Same cursor format as ours (same bodies), so the same fingerprint function.
    const fingerprint = fastHash(
      [
        buildHash,
        zip,
        loc.county_fips,
        loc.rating_area_id,
        age,
        metalParam ?? '',
        planType ?? '',
        issuer?.toLowerCase() ?? '',
        hsa ?? '',
        maxPremium ?? '',
        maxDeductible ?? '',
        sortBy,
        sortOrder,
        '',
        '',
        '',
      ].join('\u0000'),
    );

    // WHERE: the location's rates at this age, the plans offered in the county, the filters.
    const where = ['r.state = @state', 'r.rating_area = @area', 'r.age = @age', 'r.tobacco = @tobacco'];
    const params: Record<string, unknown> = {
      state: loc.state,
      area: loc.rating_area,
      age: age <= 14 ? 0 : Math.min(age, 64),
      tobacco: NO_TOBACCO,
      list: loc.plan_list,
    };
    if (metal !== undefined) {
      where.push('p.metal_level = @metal');
      params.metal = metal;
    } else if (age >= 30) where.push("p.metal_level <> 'catastrophic'");
    if (planType !== undefined) {
      where.push('p.plan_type = @plan_type');
      params.plan_type = planType;
    }
    if (issuer !== undefined) {
      where.push('instr(lower(p.issuer), @issuer) > 0');
      params.issuer = issuer.toLowerCase();
    }
    if (hsa !== undefined) {
      where.push('p.hsa_eligible = @hsa');
      params.hsa = hsa ? 1 : 0;
    }
    if (maxPremium !== undefined) {
      where.push('r.premium <= @max_premium');
      params.max_premium = Math.round(maxPremium * 100) / 100;
    }
    if (maxDeductible !== undefined) {
      where.push('p.deductible_individual <= @max_deductible');
      params.max_deductible = maxDeductible;
    }
    const from = `FROM rates r
      JOIN county_plans cp ON cp.plan_list = @list AND cp.plan_id = r.plan_id
      JOIN plans p ON p.standard_component_id = r.plan_id AND p.variant = '01'`;
    const col = SORTS[sortBy]!;
    const dir = sortOrder === 'desc' ? 'DESC' : 'ASC';
    const pageWhere = [...where];
    if (cursor !== undefined) {
      const k = decodeCursor(cursor);
      if (k === null || k.f !== fingerprint) throw bad('cursor', 'Invalid cursor');
      params.after_id = k.k[1];
      const key =
        sortBy === 'name' ? "(SELECT name_rank FROM plans WHERE standard_component_id = @after_id AND variant = '01')" : '@after_key';
      if (sortBy !== 'name') params.after_key = k.k[0];
      pageWhere.push(
        k.k[0] === null
          ? `(${col} IS NULL AND p.standard_component_id > @after_id)`
          : `(${col} ${dir === 'ASC' ? '>' : '<'} ${key} OR ${col} IS NULL OR (${col} = ${key} AND p.standard_component_id > @after_id))`,
      );
    }
    const select = `SELECT p.standard_component_id, p.id, p.name, p.issuer, p.state, p.metal_level, p.plan_type, r.premium,
        p.deductible_individual, p.deductible_family, p.moop_individual, p.moop_family, p.hsa_eligible, p.national_network,
        p.benefits_summary_url, p.brochure_url, p.formulary_url, p.provider_directory_url
      ${from} WHERE ${pageWhere.join(' AND ')}
      ORDER BY (${col} IS NULL), ${col} ${dir}, p.standard_component_id
      LIMIT @limit OFFSET @offset`;
    params.limit = cursor === undefined ? perPage : perPage + 1;
    params.offset = cursor === undefined ? (page - 1) * perPage : 0;
    const rows = prepared(select).all(params) as Row[];
    let total: number | null = null;
    let hasMore: boolean;
    if (cursor === undefined) {
      total = (prepared(`SELECT COUNT(*) AS n ${from} WHERE ${where.join(' AND ')}`).get(params) as { n: number }).n;
      hasMore = total > (page - 1) * perPage + rows.length;
    } else {
      hasMore = rows.length > perPage;
      if (hasMore) rows.length = perPage;
    }

    const plans = rows.map((r) => ({
      _links: { self: { href: `${baseUrl}/v1/health/plans/${r.id}?year=${year}` } },
      id: r.id,
      name: r.name,
      ...issuerOf(r),
      state: r.state,
      metal_level: r.metal_level,
      plan_type: r.plan_type,
      premium: r.premium,
      premium_with_credit: null,
      deductible: { individual: r.deductible_individual, family: r.deductible_family },
      max_out_of_pocket: { individual: r.moop_individual, family: r.moop_family },
      hsa_eligible: r.hsa_eligible === 1,
      national_network: r.national_network === 1,
      links: linksOf(r),
    }));
    const last = rows.at(-1);
    const lastKey = (r: Row): unknown =>
      sortBy === 'premium'
        ? r.premium
        : sortBy === 'deductible'
          ? r.deductible_individual
          : sortBy === 'max_oop'
            ? r.moop_individual
            : String(r.name).toLowerCase();
    const nextCursor =
      hasMore && last !== undefined
        ? // The year and build that issued it, as ours writes them: the first 12 characters of the build hash.
          Buffer.from(
            JSON.stringify({ v: 1, k: [lastKey(last), last.standard_component_id], f: fingerprint, y: year, b: buildHash.slice(0, 12) }),
          ).toString('base64url')
        : undefined;
    const base = `${baseUrl}/v1/health/plans`;
    const paging = new Set(['page', 'cursor']);
    const links: Record<string, { href: string; type?: string; templated?: boolean }> = {
      self: { href: `${base}${echo(raw, new Set())}`, type: 'application/json' },
      first: { href: `${base}${echo(raw, paging, [['page', '1']])}` },
    };
    if (nextCursor !== undefined) links.next = { href: `${base}${echo(raw, paging, [['cursor', nextCursor]])}` };
    if (total !== null) {
      const lastPage = Math.max(1, Math.ceil(total / perPage));
      if (page > 1) links.prev = { href: `${base}${echo(raw, paging, [['page', String(Math.min(page - 1, lastPage))]])}` };
      links.last = { href: `${base}${echo(raw, paging, [['page', String(lastPage)]])}` };
    }
    links.plan_detail = { href: `${base}/{plan_id}?year=${year}`, templated: true };
    links.stats = {
      href: `${base}/stats${echo(raw, new Set(['sort_by', 'sort_order', 'cursor', 'page', 'per_page']))}`,
      type: 'application/json',
    };
    return {
      _links: links,
      _embedded: { plans },
      total,
      page: total === null ? null : page,
      per_page: perPage,
      ...(c.req.query('page_size') !== undefined ? { page_size: perPage } : {}),
      ...(nextCursor !== undefined ? { next_cursor: nextCursor } : {}),
      zip,
      state: loc.state,
      county: loc.county_name,
      county_fips: loc.county_fips,
      rating_area: `Rating Area ${String(loc.rating_area)}`,
      // True only when the ZIP's locations differ in rating area (state and area number), as ours says.
      multiple_areas: new Set(locations.map((l) => `${String(l.state)}:${String(l.rating_area)}`)).size > 1,
      plan_year: year,
      data_source: dataSource,
      data_freshness: dataFreshness,
    };
  }

  return app;
}

function linksOf(r: Row): Record<string, unknown> {
  return {
    benefits_summary: r.benefits_summary_url,
    brochure: r.brochure_url,
    formulary: r.formulary_url,
    provider_directory: r.provider_directory_url,
  };
}

function decodeCursor(s: string): { k: [unknown, string]; f: string } | null {
  if (!/^[A-Za-z0-9_-]+$/.test(s)) return null;
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { v?: number; k?: unknown; f?: unknown };
    if (c.v !== 1 || !Array.isArray(c.k) || c.k.length !== 2 || typeof c.k[1] !== 'string' || typeof c.f !== 'string') return null;
    return { k: c.k as [unknown, string], f: c.f };
  } catch {
    return null;
  }
}

function problem(c: Context, status: number, detail: string): Response {
  const titles: Record<number, string> = {
    400: 'Validation Error',
    401: 'Unauthorized',
    404: 'Not Found',
    429: 'Rate Limit Exceeded',
    500: 'Internal Server Error',
  };
  return c.body(JSON.stringify({ type: `about:blank`, title: titles[status] ?? 'Error', status, detail }), status as 400, {
    'content-type': 'application/problem+json',
  });
}

/**
 * The issuer as the reference answers it: the name, or null with the reason where the source Plans file
 * leaves the name blank (the state-exchange files of CT, RI and VT).
 */
function issuerOf(r: Row): { issuer: string | null; issuer_note: string | null } {
  const name = String(r.issuer);
  if (name.trim() !== '') return { issuer: name, issuer_note: null };
  const noDocuments = r.benefits_summary_url === null && r.brochure_url === null && r.formulary_url === null;
  return {
    issuer: null,
    issuer_note: `The source Plans file does not publish the issuer name (HIOS issuer ID ${String(r.issuer_id)})${noDocuments ? ', nor the plan’s document URLs' : ''}`,
  };
}
