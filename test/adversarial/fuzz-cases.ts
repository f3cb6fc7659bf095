/**
 * @module The adversarial request generator: the benchmarks' seeded PRNG (mulberry32) turning a case
 * index into one hostile request description for the REST front or the MCP endpoint.
 *
 * Case `i` of seed `s` depends only on (s, i) and the context (keys and cursors are named, not
 * embedded, and resolved when sent), so any failure is replayed with `npm run fuzz -- --seed s --only i`.
 * Families: well-formed calls of every route with and without each kind of key, then mutations of them
 * (repeated, empty, huge and non-finite numbers, path parameters in the query, odd plan ids, forged and
 * foreign cursors, bad percent-encoding, invalid UTF-8 and NUL bytes, overlong URLs and header blocks,
 * odd methods, Accept and Authorization headers, HTTP/1.0, pipelining, resets), and JSON-RPC over MCP.
 */
import { prng } from '../../bench/lib/util.ts';

export type Credential = 'none' | 'free' | 'pro' | 'enterprise' | 'revoked' | 'garbage';

/** Values learned from the running service before fuzzing (real cursors to forge from). */
export interface FuzzContext {
  /** next_cursor values of real searches (zip 77002 and 77477, several ages and page sizes). */
  readonly cursors: readonly string[];
}

export interface FuzzCase {
  readonly seed: number;
  readonly index: number;
  /** Generator family, for counts and for reading a failure. */
  readonly family: string;
  readonly front: 'rest' | 'mcp';
  /** `raw`: bytes over node:net (whatever fetch would refuse or normalize); `fetch` otherwise. */
  readonly via: 'fetch' | 'raw';
  readonly method: string;
  /** The request-target as sent; for raw cases a latin1 string (one char per byte). */
  readonly target: string;
  /** Headers besides Host and Authorization; for raw cases latin1 too. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly credential: Credential;
  /** `Authorization` value used instead of the credential's (odd schemes and shapes). */
  readonly authorization?: string;
  readonly body?: string;
  readonly httpVersion: '1.0' | '1.1';
  /** Raw only: the client resets the connection right after the response starts arriving. */
  readonly resetAfterFirstByte?: boolean;
  /** Raw only: the request is written this many times on one connection (pipelining). */
  readonly pipeline?: number;
  /** MCP: send the Mcp-Session-Id of the credential's established session. */
  readonly useSession?: boolean;
  /**
   * Not valid HTTP/1.1 (NUL or raw non-ASCII bytes in the request line, bad method token): the HTTP
   * parser may answer 400 without a problem body or just close. Everything else is held to the
   * problem-document rule.
   */
  readonly malformed: boolean;
}

const PLAN_IDS = [
  '11111TX0010001-01',
  '11111TX0010002-01',
  '11111TX0010001-06',
  '22222TX0020001-01',
  '33333AK0030001-01',
  '11111TX0010001',
  '11111TX0010003-01',
];
const ODD_PLAN_IDS = [
  '',
  'x',
  '11111tx0010001-01',
  '11111TX0010001-99',
  '11111TX0010001-',
  '11111TX001000101',
  '99999XX0000000-00',
  '..',
  '%2E%2E',
  '%2F',
  '%00',
  '%ZZ',
  '%',
  '11111TX0010001-01%00',
  'a'.repeat(300),
  '%F0%9F%92%A9',
  '%C3%28',
  '11111TX0010001-01,11111TX0010002-01',
  '-01',
  '00000AA0000000-01',
];
const ZIPS = ['77002', '77003', '77477', '77301', '99501', '99701', '96813', '10001', '00000'];
const ODD_ZIPS = ['7700', '770021', 'abcde', '7700%00', '77002%20', '%37%37%30%30%32', '+77002', '-7700', '7.002', '1e4', '', '%', '%ZZ'];
const STATES = ['TX', 'AK', 'HI', 'tx', 'XX', 'T', 'TXX', '%00'];
const SCENARIOS = ['low', 'medium', 'high', 'having_baby', 'having_diabetes', 'LOW', 'x'];
const NINES = '9'.repeat(400);
/** Numeric texts that parse to ±Infinity, NaN, lose precision or take non-decimal shapes. */
const HOSTILE_NUMBERS = [
  NINES,
  `-${NINES}`,
  `${NINES}.5`,
  `0.${NINES}`,
  '1e400',
  '-1e400',
  '1e3',
  'Infinity',
  '-Infinity',
  'NaN',
  '0x10',
  '0b1',
  '0o7',
  '1_000',
  ' 7 ',
  '+5',
  '007',
  '-0',
  '9007199254740993',
  '18446744073709551616',
  '1.5',
  '.5',
  '5.',
  '-.5',
  '1,5',
  '١٢',
  '7%00',
  '%37',
  '2147483648',
  '-2147483649',
  '0',
  '-1',
  '65',
  '66',
  '100',
  '101',
];
const HOSTILE_STRINGS = [
  '',
  ' ',
  '%',
  '%Z',
  '%ZZ',
  '%C3%28',
  '%FF',
  '%C0%80',
  '%ED%A0%80',
  '%00',
  '%0A',
  '%0D%0A',
  '+',
  ',',
  ',,,',
  'a,b,c,d,e',
  '..%2F..%2F',
  '%3Cscript%3E',
  '%22%5C',
  '%F0%9F%92%A9',
  '%E2%80%AE',
  'true',
  'false',
  'null',
  '[]',
  '{}',
  'x'.repeat(1000),
  'y'.repeat(9000),
];
/** Raw-only bytes (latin1 chars = bytes) that fetch would percent-encode or refuse. */
const RAW_BYTES = ['\u0000', '\u00ff', '\u00c3\u0028', '\u00ed\u00a0\u0080', '\u0080', '\u00f0\u009f\u0092\u00a9', '\u0007', '\u007f'];

interface RouteSpec {
  readonly name: string;
  /** Path with {placeholders} filled by `fill`. */
  readonly path: string;
  readonly params: Readonly<Record<string, () => string>>;
  readonly required: readonly string[];
}

export class CaseGenerator {
  readonly #seed: number;
  readonly #ctx: FuzzContext;
  #rand: () => number = Math.random;

  constructor(seed: number, ctx: FuzzContext) {
    this.#seed = seed >>> 0;
    this.#ctx = ctx;
  }

  /** Case `index`: its own PRNG stream, so cases can be generated (and replayed) in any order. */
  case(index: number): FuzzCase {
    this.#rand = prng((this.#seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
    const r = this.#rand();
    if (r < 0.58) return this.#rest(index);
    if (r < 0.8) return this.#raw(index);
    return this.#mcp(index);
  }

  #int(n: number): number {
    return Math.floor(this.#rand() * n);
  }

  #pick<T>(xs: readonly T[]): T {
    return xs[this.#int(xs.length)]!;
  }

  #chance(p: number): boolean {
    return this.#rand() < p;
  }

  #age = (): string => String(this.#int(66));
  #plan = (): string => this.#pick(PLAN_IDS);
  #zip = (): string => this.#pick(ZIPS);

  #cursor(): string {
    const real = this.#ctx.cursors.length > 0 ? this.#pick(this.#ctx.cursors) : 'eyJ2IjoxfQ';
    switch (this.#int(7)) {
      case 0:
        return real; // usually foreign: another query's cursor
      case 1:
        return real.slice(0, Math.max(1, this.#int(real.length)));
      case 2:
        return Buffer.from(Array.from({ length: 1 + this.#int(80) }, () => this.#int(256))).toString('base64url');
      case 3:
        return Buffer.from(
          this.#pick([
            '{"v":1,"k":[1e400,"x"],"f":"0"}',
            '{"v":1,"k":[null,null],"f":null}',
            `{"v":1,"k":[1,"11111TX0010001"],"f":"${'a'.repeat(16)}"}`,
            '{"v":2}',
            '[]',
            'null',
            '{"__proto__":{"v":1}}',
            '"x"',
          ]),
        ).toString('base64url');
      case 4:
        return `${real}==`;
      case 5:
        return this.#pick(['%', '%ZZ', 'a b', '....', 'A'.repeat(513), 'A'.repeat(5000), '%00', '+/=']);
      default:
        return real.split('').reverse().join('');
    }
  }

  #routes(): readonly RouteSpec[] {
    const year = (): string => this.#pick(['2025', '2025', '2024', '2026', '2014', '2031']);
    const county = (): string => this.#pick(['48201', '48157', '02020', '00000']);
    return [
      {
        name: 'search',
        path: '/v1/health/plans',
        params: {
          zip: this.#zip,
          age: this.#age,
          ages: () => Array.from({ length: 1 + this.#int(11) }, this.#age).join(','),
          year,
          county_fips: county,
          metal_level: () => this.#pick(['bronze', 'silver', 'gold', 'catastrophic', 'expanded_bronze', 'expanded%20bronze', 'tin']),
          plan_type: () => this.#pick(['hmo', 'ppo', 'epo', 'pos', 'indemnity', 'HMO']),
          issuer: () => this.#pick(['lone', 'gulf', 'a', '%25', '_', '.*']),
          hsa_eligible: () => this.#pick(['true', 'false', '1', 'yes']),
          max_premium: () => String(this.#int(2000)),
          max_deductible: () => String(this.#int(10000)),
          sort_by: () => this.#pick(['premium', 'deductible', 'max_oop', 'name', 'id']),
          sort_order: () => this.#pick(['asc', 'desc']),
          sort: () => this.#pick(['premium', 'name']),
          order: () => this.#pick(['asc', 'desc']),
          cursor: () => this.#cursor(),
          page: () => String(1 + this.#int(4)),
          per_page: () => String(1 + this.#int(100)),
          page_size: () => String(1 + this.#int(100)),
          income: () => String(this.#int(200000)),
          household_size: () => String(1 + this.#int(8)),
        },
        required: ['zip', 'age'],
      },
      {
        name: 'compare',
        path: '/v1/health/plans/compare',
        params: {
          ids: () => Array.from({ length: 1 + this.#int(5) }, this.#plan).join(','),
          zip: this.#zip,
          age: this.#age,
          ages: () => Array.from({ length: 1 + this.#int(11) }, this.#age).join(','),
          year,
          county_fips: county,
          income: () => String(this.#int(200000)),
          household_size: () => String(1 + this.#int(8)),
        },
        required: ['ids', 'zip', 'age'],
      },
      {
        name: 'aptc',
        path: '/v1/health/plans/aptc-estimate',
        params: {
          zip: this.#zip,
          household_income: () => String(this.#int(300000)),
          income: () => String(this.#int(300000)),
          household_size: () => String(1 + this.#int(8)),
          ages: () => Array.from({ length: 1 + this.#int(6) }, this.#age).join(','),
          year,
          county_fips: county,
        },
        required: ['zip', 'household_income', 'household_size', 'ages'],
      },
      {
        name: 'crosswalk',
        path: '/v1/health/plans/crosswalk',
        params: { plan_id: () => this.#plan().slice(0, 14), year: () => this.#pick(['2024', '2025']), state: () => this.#pick(STATES) },
        required: ['plan_id', 'year', 'state'],
      },
      {
        name: 'oop',
        path: '/v1/health/plans/{plan_id}/oop-estimate',
        params: {
          zip: this.#zip,
          age: this.#age,
          ages: () => Array.from({ length: 1 + this.#int(11) }, this.#age).join(','),
          scenario: () => this.#pick(SCENARIOS),
          year,
          county_fips: county,
        },
        required: ['zip', 'age', 'scenario'],
      },
      {
        name: 'plan',
        path: '/v1/health/plans/{plan_id}',
        params: {
          year,
          zip: this.#zip,
          age: this.#age,
          ages: () => Array.from({ length: 1 + this.#int(11) }, this.#age).join(','),
          income: () => String(this.#int(200000)),
          household_size: () => String(1 + this.#int(8)),
        },
        required: [],
      },
      { name: 'zip', path: this.#pick(['/v1/health/zips/{zip}', '/v1/health/zip/{zip}']), params: { year }, required: [] },
      { name: 'years', path: '/v1/health/years', params: {}, required: [] },
      { name: 'issuers', path: '/v1/health/issuers', params: { state: () => this.#pick(STATES), year }, required: ['state'] },
      {
        name: 'docs',
        path: this.#pick([
          '/v1/openapi.json',
          '/healthz',
          '/readyz',
          '/problems/validation-error',
          '/problems/nope',
          '/',
          '/v1',
          '/v1/health',
          '/v1/health/plans/',
          '/V1/HEALTH/YEARS',
        ]),
        params: {},
        required: [],
      },
    ];
  }

  /** A request of a REST route: well-formed, then 0–4 mutations. */
  #restRequest(): { family: string; path: string; pairs: Array<[string, string]> } {
    const route = this.#pick(this.#routes());
    const odd = this.#chance(0.25);
    const path = route.path
      .replace('{plan_id}', () => (odd ? this.#pick(ODD_PLAN_IDS) : this.#plan()))
      .replace('{zip}', () => (odd ? this.#pick(ODD_ZIPS) : this.#zip()));
    const names = Object.keys(route.params);
    const pairs: Array<[string, string]> = [];
    for (const n of names) if (route.required.includes(n) ? this.#chance(0.95) : this.#chance(0.2)) pairs.push([n, route.params[n]!()]);
    const mutations = this.#int(5);
    const kinds: string[] = [];
    for (let m = 0; m < mutations; m++) {
      const kind = this.#int(9);
      const at = pairs.length === 0 ? -1 : this.#int(pairs.length);
      switch (kind) {
        case 0:
          if (at >= 0) pairs[at] = [pairs[at]![0], this.#pick(HOSTILE_NUMBERS)];
          kinds.push('number');
          break;
        case 1:
          if (at >= 0) pairs[at] = [pairs[at]![0], this.#pick(HOSTILE_STRINGS)];
          kinds.push('string');
          break;
        case 2:
          if (at >= 0) pairs.push([pairs[at]![0], this.#chance(0.5) ? pairs[at]![1] : this.#pick(HOSTILE_NUMBERS)]);
          kinds.push('repeat');
          break;
        case 3:
          pairs.push([
            this.#pick([
              'plan_id',
              'zip',
              'ids',
              'cursor',
              'page_size',
              'sort',
              'order',
              'income',
              '__proto__',
              'constructor',
              'hasOwnProperty',
              '',
              '%00',
              'a'.repeat(200),
            ]),
            this.#pick([...HOSTILE_STRINGS.slice(0, 10), '77002', '11111TX0010002-01']),
          ]);
          kinds.push('extra');
          break;
        case 4:
          pairs.push(['cursor', this.#cursor()]);
          kinds.push('cursor');
          break;
        case 5:
          if (at >= 0) pairs.splice(at, 1);
          kinds.push('drop');
          break;
        case 6:
          for (let k = this.#int(300); k > 0; k--) pairs.push([`p${k}`, String(k)]);
          kinds.push('many');
          break;
        case 7:
          if (at >= 0) pairs[at] = [pairs[at]![0], `${pairs[at]![1]}${this.#pick(['%00', '%FF', '%', ',', '%2C', '+', '%20'])}`];
          kinds.push('suffix');
          break;
        default:
          if (at >= 0) pairs[at] = [pairs[at]![0], this.#pick(HOSTILE_NUMBERS.slice(0, 4))];
          kinds.push('infinite');
      }
    }
    return { family: `rest:${route.name}${kinds.length > 0 ? `+${kinds.sort().join('+')}` : ''}`, path, pairs };
  }

  #credential(): Credential {
    return this.#pick<Credential>(['pro', 'pro', 'enterprise', 'free', 'free', 'none', 'revoked', 'garbage']);
  }

  #authorization(): string | undefined {
    if (!this.#chance(0.08)) return undefined;
    return this.#pick([
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      `bearer hpd_${'0'.repeat(40)}`,
      `Bearer hpd_${'g'.repeat(40)}`,
      `Bearer ${'x'.repeat(6000)}`,
      'Token abc',
      'Bearer a.b.c',
      'Bearer eyJhbGciOiJub25lIn0.e30.',
      '  Bearer  x  ',
    ]);
  }

  #accept(): Array<[string, string]> {
    if (!this.#chance(0.15)) return [];
    return [
      [
        'accept',
        this.#pick([
          '*/*',
          'application/json',
          'text/html',
          'application/xml',
          'application/json;q=0',
          'application/*',
          ';;;,,,',
          'application/problem+json',
          '*/*;q=0.1, text/html',
          'x'.repeat(3000),
        ]),
      ],
    ];
  }

  #otherHeaders(): Array<[string, string]> {
    const h: Array<[string, string]> = [];
    if (this.#chance(0.05)) h.push(['if-none-match', this.#pick(['*', 'W/"x"', '"', 'W/', 'a'.repeat(2000), 'W/"a", W/"b", *'])]);
    if (this.#chance(0.03)) h.push(['x-pad', 'a'.repeat(this.#pick([3000, 5000, 17000]))]);
    if (this.#chance(0.02)) for (let i = 0; i < 120; i++) h.push([`x-h${i}`, String(i)]);
    if (this.#chance(0.02)) h.push(['origin', this.#pick(['https://evil.test', 'null'])]);
    return h;
  }

  #encodeQuery(pairs: ReadonlyArray<readonly [string, string]>): string {
    // Values are already in their on-the-wire form: hostile percent-escapes must reach the server as sent.
    return pairs.length === 0
      ? ''
      : `?${pairs.map(([k, v]) => (this.#chance(0.03) ? k : `${k}=${v}`)).join(this.#chance(0.05) ? '&&' : '&')}`;
  }

  #rest(index: number): FuzzCase {
    const { family, path, pairs } = this.#restRequest();
    const method = this.#chance(0.88) ? 'GET' : this.#pick(['HEAD', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH']);
    const headers = [...this.#accept(), ...this.#otherHeaders()];
    const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? this.#pick(['{}', 'x'.repeat(100), '']) : undefined;
    return {
      seed: this.#seed,
      index,
      family,
      front: 'rest',
      via: 'fetch',
      method,
      target: `${path}${this.#encodeQuery(pairs)}`,
      headers,
      credential: this.#credential(),
      authorization: this.#authorization(),
      body,
      httpVersion: '1.1',
      malformed: false,
    };
  }

  /** Bytes fetch would refuse or rewrite, over either front. */
  #raw(index: number): FuzzCase {
    const front = this.#chance(0.7) ? 'rest' : 'mcp';
    const base =
      front === 'rest'
        ? this.#restRequest()
        : {
            family: 'mcp',
            path: this.#pick(['/mcp', '/', '/.well-known/oauth-protected-resource', '/mcp/.well-known/oauth-protected-resource', '/nope']),
            pairs: [] as Array<[string, string]>,
          };
    let target = `${base.path}${this.#encodeQuery(base.pairs)}`;
    let method = 'GET';
    let malformed = false;
    let httpVersion: '1.0' | '1.1' = '1.1';
    let resetAfterFirstByte = false;
    let pipeline: number | undefined;
    const headers: Array<[string, string]> = [...this.#accept(), ...this.#otherHeaders()];
    const kind = this.#int(11);
    let family = `raw:${front}:`;
    switch (kind) {
      case 0: {
        const b = this.#pick(RAW_BYTES);
        const at = this.#int(target.length + 1);
        target = target.slice(0, at) + b + target.slice(at);
        malformed = true;
        family += 'bytes';
        break;
      }
      case 1:
        target = `${target}${target.includes('?') ? '&' : '?'}pad=${'a'.repeat(this.#pick([2000, 4100, 9000, 17000, 70000]))}`;
        family += 'overlong-url';
        break;
      case 2:
        httpVersion = '1.0';
        family += 'http10';
        break;
      case 3:
        method = this.#pick(['CONNECT', 'TRACE', 'PROPFIND', 'FOO', 'get', 'M-SEARCH', 'PURGE', 'QUERY', 'SEARCH', 'LINK']);
        family += 'method';
        break;
      case 4:
        method = this.#pick(['G\u0000T', 'GE T', 'GET\t', '\u00c3\u00a9', '']);
        malformed = true;
        family += 'bad-method';
        break;
      case 5:
        target = this.#pick([
          '//',
          '//x',
          'http://[',
          'http://x/mcp',
          'http://127.0.0.1/v1/health/years',
          '*',
          '/%',
          '/%ZZ',
          '/..',
          '/../../etc/passwd',
          '/v1/health/plans/%',
          '/v1/health/zips/%ZZ%ZZ',
          '/v1/health/plans/%C3%28',
          '/v1//health/years',
          '/v1/health/years?',
          '/v1/health/years#x',
          '?',
          '/mcp?x=%ZZ',
          '/mcp/',
        ]);
        family += 'target';
        break;
      case 6:
        resetAfterFirstByte = true;
        target =
          front === 'rest'
            ? this.#pick([
                '/v1/openapi.json',
                '/v1/health/plans?zip=77002&age=30&per_page=100',
                '/v1/health/plans/compare?ids=11111TX0010001-01,11111TX0010002-01,11111TX0010003-01,11111TX0010004-01&zip=77002&age=30',
              ])
            : target;
        family += 'reset';
        break;
      case 7:
        pipeline = this.#pick([2, 10, 50, 200]);
        family += 'pipeline';
        break;
      case 8:
        headers.push(['x-pad', 'b'.repeat(this.#pick([4200, 9000, 20000]))]);
        family += 'big-headers';
        break;
      case 9:
        headers.push(
          ['content-length', this.#pick(['5', '-1', 'abc', '99999999999999999999'])],
          ['transfer-encoding', this.#pick(['chunked', 'gzip', 'chunked, chunked'])],
        );
        malformed = true;
        family += 'framing';
        break;
      default:
        headers.push(['x-bytes', this.#pick(RAW_BYTES.filter((b) => b !== '\u0000' && b !== '\u0007' && b !== '\u007f'))]);
        family += 'header-bytes';
    }
    return {
      seed: this.#seed,
      index,
      family,
      front,
      via: 'raw',
      method,
      target,
      headers,
      credential: this.#credential(),
      authorization: this.#authorization(),
      httpVersion,
      resetAfterFirstByte,
      pipeline,
      malformed,
    };
  }

  /** A hostile value for a tool argument, as JSON text (so 1e400 reaches the server as written). */
  #jsonValue(): string {
    switch (this.#int(6)) {
      case 0:
        return this.#pick([
          '1e400',
          '-1e400',
          '1e21',
          '1e-7',
          '1.5',
          '-0',
          '0',
          '65',
          '66',
          '9007199254740993',
          '10000001',
          '1E+308',
          '2e308',
        ]);
      case 1:
        return JSON.stringify(
          this.#pick([
            ...ZIPS,
            ...ODD_ZIPS.map(decodeLoose),
            ...PLAN_IDS,
            ...ODD_PLAN_IDS.map(decodeLoose),
            'x'.repeat(this.#pick([10, 5000, 200000])),
            '\u0000',
            '\ud800',
            'TX',
          ]),
        );
      case 2:
        return this.#pick([
          'null',
          'true',
          'false',
          '{}',
          '{"a":1}',
          '[]',
          '[1e400]',
          '[30,1e400]',
          '[null]',
          '[[1]]',
          `[${Array.from({ length: 50 }, (_, i) => i).join(',')}]`,
        ]);
      case 3:
        return JSON.stringify([this.#plan(), this.#plan(), ...(this.#chance(0.3) ? [this.#plan(), this.#plan(), this.#plan()] : [])]);
      case 4:
        return JSON.stringify(this.#cursor());
      default:
        return String(this.#int(70));
    }
  }

  #toolCall(): string {
    const tools = [
      'search_plans',
      'get_plan_details',
      'compare_plans',
      'estimate_out_of_pocket',
      'estimate_aptc',
      'check_ichra_affordability',
      'get_plan_stats',
      'search_dental_plans',
      'get_dental_plan_details',
      'get_plan_crosswalk',
      'lookup_zip',
      'list_issuers',
      'list_plan_years',
    ];
    const good: Record<string, string> = {
      search_plans: `"zip":"77002","age":${this.#int(66)}`,
      get_plan_details: `"plan_id":"${this.#plan()}"`,
      compare_plans: `"plan_ids":["11111TX0010001-01","11111TX0010002-01"],"zip":"77002","age":40`,
      estimate_out_of_pocket: `"plan_id":"11111TX0010001-01","zip":"77002","age":40,"scenario":"low"`,
      estimate_aptc: `"zip":"77002","household_income":30000,"household_size":2,"ages":[40,38]`,
      get_plan_stats: `"zip":"77002","age":${this.#int(66)}`,
      search_dental_plans: `"zip":"77002","age":${this.#int(66)}`,
      get_dental_plan_details: `"plan_id":"55555TX0050001-01"`,
      check_ichra_affordability: `"zip":"77002","age":${this.#int(66)},"household_income":52000,"hra_monthly":300`,
      get_plan_crosswalk: `"plan_id":"11111TX0010001","year":2024,"state":"TX"`,
      lookup_zip: `"zip":"77477"`,
      list_issuers: `"state":"TX"`,
      list_plan_years: '',
    };
    const name = this.#chance(0.95) ? this.#pick(tools) : this.#pick(['frobnicate', '', '__proto__', 'x'.repeat(1000)]);
    const names = [
      'zip',
      'age',
      'year',
      'plan_id',
      'plan_ids',
      'ids',
      'income',
      'household_income',
      'household_size',
      'ages',
      'per_page',
      'page',
      'cursor',
      'max_premium',
      'state',
      'scenario',
      'county_fips',
      'sort_by',
      'hsa_eligible',
      '__proto__',
      'constructor',
    ];
    const extra: string[] = [];
    for (let k = this.#int(4); k > 0; k--) extra.push(`${JSON.stringify(this.#pick(names))}:${this.#jsonValue()}`);
    const base = good[name] ?? '';
    const args = [base, ...extra].filter((s) => s !== '').join(',');
    const argsJson = this.#chance(0.05) ? this.#pick(['null', '[]', '"x"', '1e400']) : `{${args}}`;
    return `{"name":${JSON.stringify(name)},"arguments":${argsJson}}`;
  }

  #mcp(index: number): FuzzCase {
    const id = this.#chance(0.9) ? String(1 + this.#int(1e6)) : this.#pick(['null', '"x"', '{}', '1e400', '[]']);
    const kind = this.#int(10);
    let body: string;
    let useSession = true;
    let family = 'mcp:';
    switch (kind) {
      case 0:
        body = `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":${this.#pick(['{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}', '{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"f","version":"1"}}', '{}', 'null', '{"protocolVersion":1e400}'])}}`;
        useSession = this.#chance(0.3);
        family += 'initialize';
        break;
      case 1:
        body = `{"jsonrpc":"2.0","id":${id},"method":"tools/list"${this.#chance(0.3) ? ',"params":{"cursor":"x"}' : ''}}`;
        family += 'tools/list';
        break;
      case 2:
        body = this.#pick([
          '',
          '{',
          'null',
          '[]',
          '1e400',
          '"x"',
          '{"jsonrpc":"1.0"}',
          '{"jsonrpc":"2.0","method":1}',
          `[${'['.repeat(5000)}${']'.repeat(5000)}]`,
          '{"jsonrpc":"2.0","id":1,"method":"x".repeat(1)}',
          '\u0000',
        ]);
        family += 'garbage';
        break;
      case 3:
        body = `[${Array.from({ length: 1 + this.#int(20) }, (_, i) => `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/call","params":${this.#toolCall()}}`).join(',')}]`;
        family += 'batch';
        break;
      case 4:
        body = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(this.#pick(['ping', 'resources/list', 'prompts/list', 'logging/setLevel', 'completion/complete', 'notifications/initialized', 'x/y', '']))},"params":{}}`;
        family += 'method';
        break;
      default:
        body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${this.#toolCall()}}`;
        family += 'tools/call';
    }
    const method = this.#chance(0.92) ? 'POST' : this.#pick(['GET', 'DELETE', 'PUT', 'OPTIONS', 'HEAD']);
    if (method !== 'POST') {
      // A GET with a live session would open a never-ending SSE stream, and a DELETE would end the session.
      useSession = false;
      family = `mcp:${method}`;
    }
    const headers: Array<[string, string]> = [];
    if (this.#chance(0.92)) headers.push(['accept', 'application/json, text/event-stream']);
    else headers.push(...this.#accept());
    headers.push([
      'content-type',
      this.#chance(0.95) ? 'application/json' : this.#pick(['text/plain', 'application/x-www-form-urlencoded', '']),
    ]);
    if (!useSession && this.#chance(0.3))
      headers.push(['mcp-session-id', this.#pick(['00000000-0000-4000-8000-000000000000', 'x', 'a'.repeat(5000), ''])]);
    if (this.#chance(0.2)) headers.push(['mcp-protocol-version', this.#pick(['2025-11-25', '2025-03-26', '1999-01-01', 'x'])]);
    if (this.#chance(0.03)) body = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'z'.repeat(1_100_000)}"}}`;
    return {
      seed: this.#seed,
      index,
      family,
      front: 'mcp',
      via: 'fetch',
      method,
      target: this.#pick(['/mcp', '/mcp', '/mcp', '/', '/mcp/']),
      headers,
      credential: this.#credential(),
      authorization: this.#authorization(),
      body: method === 'GET' || method === 'HEAD' ? undefined : body,
      httpVersion: '1.1',
      useSession,
      malformed: false,
    };
  }
}

/** The text a percent-encoded value stands for, or the value itself when it is not valid. */
function decodeLoose(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
