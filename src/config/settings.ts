/**
 * @module Every HPD_* environment variable, declared once: name, default, parser, description. The
 * typed configuration (serve-config.ts), `hpd serve --help`, `hpd config` and the configuration table
 * (settings-docs.ts) are all derived from this list, so a variable cannot be documented and read
 * differently, and a test fails when docs/configuration.md is out of date.
 *
 * An empty value counts as unset, as `HPD_DATA_DIR=` always did: `env -u` is awkward in unit files and
 * compose files, an empty assignment is not.
 *
 * Defaults that depend on other settings (the URLs built from the host and ports) are `undefined`
 * here and derived in serve-config.ts; `defaultText` says how, for the documentation.
 *
 * Not declared here: HPD_BUILD_* are diagnostic codes of `hpd build`, not variables; HPD_BENCH_* and
 * HPD_WRK_* configure the benchmarks only (bench/, listed in BENCH_VARIABLES); HPD_LB_* and
 * HPD_BACKEND_* configure deploy/haproxy.cfg, not hpd.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTrustedProxyList } from '../http/trusted-proxies.ts';
import { LOG_LEVELS, type LogLevel } from '../observability/log-levels.ts';
import { ALL_SIGNUPS_PER_HOUR } from '../auth-server/signup-limit.ts';
import { DEFAULT_DAILY_LIMITS } from '../policy/tiers.ts';
import { ConfigError } from './config-error.ts';
import * as p from './parsers.ts';
import { maskRedisUrl } from '../policy/redis-url.ts';

/** The repository root: default locations are inside it, so every command works from any directory. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Which commands read a setting, for the documentation. */
export type SettingScope = 'serve' | 'all';

export interface Setting<T> {
  readonly name: `HPD_${string}`;
  readonly parse: p.Parser<T>;
  /** Completes "<NAME> must be …" in the error for a refused value. */
  readonly expected: string;
  /** The value when unset; undefined for the derived defaults of serve-config.ts. */
  readonly fallback: T;
  /** The default as documented (docs/configuration.md, usage text). */
  readonly defaultText: string;
  readonly description: string;
  readonly scope: SettingScope;
  /** Masked entirely by `hpd config`. */
  readonly secret?: boolean;
  /** Masks part of a value (the password in a URL); applied by `hpd config`. */
  readonly mask?: (text: string) => string;
  /** Names what is wrong with a refused value, when "must be <expected>" alone would leave it a riddle. */
  readonly problem?: (text: string) => string | undefined;
}

function setting<T>(s: Setting<T>): Setting<T> {
  return s;
}

const tierLimit = (tier: keyof typeof DEFAULT_DAILY_LIMITS, name: `HPD_${string}`) =>
  setting<number>({
    name,
    parse: p.integer(1, Number.MAX_SAFE_INTEGER),
    expected: 'a positive integer (requests per day)',
    fallback: DEFAULT_DAILY_LIMITS[tier],
    defaultText: String(DEFAULT_DAILY_LIMITS[tier]),
    description: `daily request quota of ${tier === 'enterprise' ? 'an' : 'a'} ${tier} user (all of the user's keys share it), reset at 00:00 UTC`,
    scope: 'serve',
  });

/** Hides the passwords of a Redis URL; the rest (hosts, ports, master name, database) helps diagnose. */
export function maskUrlPassword(text: string): string {
  return maskRedisUrl(text, '****');
}

export const SETTINGS = {
  port: setting<number>({
    name: 'HPD_PORT',
    parse: p.port,
    expected: 'a port number from 0 to 65535',
    fallback: 8080,
    defaultText: '8080',
    description: 'REST API port (0: any free port)',
    scope: 'serve',
  }),
  host: setting<string>({
    name: 'HPD_HOST',
    parse: p.host,
    expected: 'a host name or IP address to listen on, such as 127.0.0.1 or 0.0.0.0',
    fallback: '127.0.0.1',
    defaultText: '127.0.0.1',
    description: 'address the REST, MCP and authorization listeners bind',
    scope: 'serve',
  }),
  baseUrl: setting<string | undefined>({
    name: 'HPD_BASE_URL',
    parse: p.httpUrl,
    expected: 'an absolute http(s) URL such as https://api.example.com',
    fallback: undefined,
    defaultText: 'http://HPD_HOST:HPD_PORT',
    description: 'public origin used in links and problem types; set it behind a proxy or balancer',
    scope: 'serve',
  }),
  upgradeUrl: setting<string | undefined>({
    name: 'HPD_UPGRADE_URL',
    parse: p.httpUrl,
    expected: 'an absolute http(s) URL such as https://example.com/pricing',
    fallback: undefined,
    defaultText: 'HPD_BASE_URL/pricing',
    description: 'pricing page named in 402 and 429 answers',
    scope: 'serve',
  }),
  workers: setting<number | undefined>({
    name: 'HPD_WORKERS',
    parse: p.integer(0, 256),
    expected: 'a whole number of REST worker threads from 0 to 256',
    fallback: undefined,
    defaultText: 'the number of cores',
    description: 'REST worker threads behind one port (--workers N overrides it); 0 serves REST from the main thread',
    scope: 'serve',
  }),
  mcpPort: setting<number>({
    name: 'HPD_MCP_PORT',
    parse: p.port,
    expected: 'a port number from 0 to 65535',
    fallback: 8081,
    defaultText: '8081',
    description: 'MCP server port',
    scope: 'serve',
  }),
  mcpUrl: setting<string | undefined>({
    name: 'HPD_MCP_URL',
    parse: p.httpUrl,
    expected: 'an absolute http(s) URL such as https://mcp.example.com/mcp',
    fallback: undefined,
    defaultText: 'http://HPD_HOST:HPD_MCP_PORT/mcp',
    description: 'public URL of the MCP endpoint (its OAuth resource identifier)',
    scope: 'serve',
  }),
  mcpAllowedOrigins: setting<readonly string[]>({
    name: 'HPD_MCP_ALLOWED_ORIGINS',
    parse: p.originList,
    expected: 'comma-separated http(s) origins such as https://app.example,https://other.example',
    fallback: [],
    defaultText: 'none',
    description: 'browser origins allowed to call MCP besides its own',
    scope: 'serve',
  }),
  mcpIdleMinutes: setting<number>({
    name: 'HPD_MCP_IDLE_MINUTES',
    parse: p.decimal(0, 10_080, { minExclusive: true }),
    expected: 'a positive number of minutes up to 10080',
    fallback: 30,
    defaultText: '30',
    description: 'an idle MCP session is closed after this long',
    scope: 'serve',
  }),
  authPort: setting<number>({
    name: 'HPD_AUTH_PORT',
    parse: p.port,
    expected: 'a port number from 0 to 65535',
    fallback: 8082,
    defaultText: '8082',
    description: 'embedded OAuth authorization server port',
    scope: 'serve',
  }),
  authUrl: setting<string | undefined>({
    name: 'HPD_AUTH_URL',
    parse: p.httpUrl,
    expected: 'an absolute http(s) URL such as https://auth.example.com',
    fallback: undefined,
    defaultText: 'http://HPD_HOST:HPD_AUTH_PORT',
    description: 'public issuer URL of the embedded authorization server',
    scope: 'serve',
  }),
  authIssuer: setting<string | undefined>({
    name: 'HPD_AUTH_ISSUER',
    parse: p.httpUrl,
    expected: 'an absolute http(s) URL of an OAuth issuer',
    fallback: undefined,
    defaultText: 'none',
    description: 'an external OAuth issuer; the embedded authorization server then does not start',
    scope: 'serve',
  }),
  maxConnections: setting<number>({
    name: 'HPD_MAX_CONNECTIONS',
    parse: p.integer(1, 1_000_000),
    expected: 'a positive integer (connections)',
    fallback: 1000,
    defaultText: '1000',
    description: 'concurrent connections per MCP, authorization and metrics listener',
    scope: 'serve',
  }),
  maxConnectionsPerAddress: setting<number>({
    name: 'HPD_MAX_CONNECTIONS_PER_ADDRESS',
    parse: p.integer(0, 1_000_000),
    expected: 'a whole number of connections (0: no per-address limit)',
    fallback: 100,
    defaultText: '100',
    description:
      'connections one client address may hold on each MCP, authorization and metrics listener (the client a proxy in HPD_TRUSTED_PROXIES names, else the peer); more get a 429 problem and are closed, so one address cannot take the whole HPD_MAX_CONNECTIONS. Behind a load balancer not listed in HPD_TRUSTED_PROXIES every connection comes from its address: keep this above its per-instance maxconn, or 0',
    scope: 'serve',
  }),
  restMaxConnections: setting<number>({
    name: 'HPD_REST_MAX_CONNECTIONS',
    parse: p.integer(1, 1_000_000),
    expected: 'a positive integer (connections)',
    fallback: 10_000,
    defaultText: '10000',
    description: 'concurrent connections on the REST listener; more are closed as they open',
    scope: 'serve',
  }),
  restMaxConnectionsPerAddress: setting<number>({
    name: 'HPD_REST_MAX_CONNECTIONS_PER_ADDRESS',
    parse: p.integer(0, 1_000_000),
    expected: 'a whole number of connections (0: no per-address limit)',
    fallback: 1_000,
    defaultText: '1000',
    description:
      'REST connections one client address may hold (Linux: counted from the kernel socket table); more are closed as they open, so one address cannot take the whole HPD_REST_MAX_CONNECTIONS. A load balancer listed in HPD_TRUSTED_PROXIES is not counted itself: each client its PROXY header names is, at its requests (past the limit: 429, connection closed). Behind a load balancer not listed there every connection comes from its address: keep this above its per-instance maxconn, or 0',
    scope: 'serve',
  }),
  trustedProxies: setting<readonly string[]>({
    name: 'HPD_TRUSTED_PROXIES',
    parse: parseTrustedProxyList,
    expected: 'comma-separated IP addresses or CIDR blocks such as 10.0.0.5,192.168.0.0/24,fd00::/8',
    fallback: [],
    defaultText: 'none',
    description:
      "load balancers whose PROXY protocol v2 header (HAProxy's send-proxy-v2) names the client on every listener but metrics: per-address limits (REST connections per address, log-in throttle, sign-up and client registration) then key on the client, not the load balancer. A header from any other peer is not believed. List only the load balancers' own addresses",
    scope: 'serve',
  }),
  responseCacheMb: setting<number>({
    name: 'HPD_RESPONSE_CACHE_MB',
    parse: p.decimal(0, 65_536),
    expected: 'a number of MiB from 0 to 65536',
    fallback: 64,
    defaultText: '64',
    description: 'REST response cache (years, ZIPs, issuers, plan detail); 0 turns it off',
    scope: 'serve',
  }),
  searchCacheMb: setting<number>({
    name: 'HPD_SEARCH_CACHE_MB',
    parse: p.decimal(0, 65_536),
    expected: 'a number of MiB from 0 to 65536',
    fallback: 0,
    defaultText: '0 (off)',
    description:
      'REST cache of plan search pages by request text (LRU, per thread, ~19 KB a page, kept from a second sighting); 0 turns it off. Off by default: on a Zipf (s=1) mix of 119k distinct searches, 32 MiB hit 56 % yet cost more CPU per request than no cache (churn of 17 KB off-heap copies); it pays when few distinct searches repeat (400-URL mix: ~38 vs ~96 µs a request)',
    scope: 'serve',
  }),
  drainSeconds: setting<number>({
    name: 'HPD_DRAIN_SECONDS',
    parse: p.decimal(0, 3600),
    expected: 'a number of seconds from 0 to 3600',
    fallback: 10,
    defaultText: '10',
    description: 'longest shutdown drain after SIGTERM before every connection is closed',
    scope: 'serve',
  }),
  drainNoticeSeconds: setting<number>({
    name: 'HPD_DRAIN_NOTICE_SECONDS',
    parse: p.decimal(0, 3600),
    expected: 'a number of seconds from 0 to 3600',
    fallback: 2,
    defaultText: '2',
    description:
      "after SIGTERM, how long /readyz fails while every listener still accepts and serves, so the load balancer takes the instance out before it stops accepting: at least the balancer's check interval × fall (deploy/haproxy.cfg: 500 ms, then 250 ms, fall 2: out within ~0.8 s); at most half of HPD_DRAIN_SECONDS is used; 0 without a balancer",
    scope: 'serve',
  }),
  signupsPerHour: setting<number>({
    name: 'HPD_SIGNUPS_PER_HOUR',
    parse: p.integer(0, 1_000_000),
    expected: 'a whole number of accounts (0: no server-wide limit)',
    fallback: ALL_SIGNUPS_PER_HOUR,
    defaultText: String(ALL_SIGNUPS_PER_HOUR),
    description:
      'accounts the sign-up form of the embedded authorization server creates in an hour, from every address together (shared by the instances on one Redis); past it the form answers 429 with the wait. Each address is also paced by the log-in throttle. Accounts are kept, so this bounds how fast anyone can grow the state store',
    scope: 'serve',
  }),
  watchBuilds: setting<boolean>({
    name: 'HPD_WATCH_BUILDS',
    parse: p.flag,
    expected: '1 (adopt published builds by itself) or 0 (only on SIGHUP / hpd reload)',
    fallback: true,
    defaultText: '1',
    description: '1: adopt newly published builds within ~1 s; 0: only on SIGHUP or hpd reload',
    scope: 'serve',
  }),
  quotaFree: tierLimit('free', 'HPD_QUOTA_FREE'),
  quotaPro: tierLimit('pro', 'HPD_QUOTA_PRO'),
  quotaEnterprise: tierLimit('enterprise', 'HPD_QUOTA_ENTERPRISE'),
  metricsPort: setting<number | undefined>({
    name: 'HPD_METRICS_PORT',
    parse: p.port,
    expected: 'a port number from 0 to 65535',
    fallback: undefined,
    defaultText: 'none',
    description: 'port of the Prometheus /metrics listener; unset: no metrics listener',
    scope: 'serve',
  }),
  metricsHost: setting<string>({
    name: 'HPD_METRICS_HOST',
    parse: p.host,
    expected: 'a host name or IP address to listen on, such as 127.0.0.1',
    fallback: '127.0.0.1',
    defaultText: '127.0.0.1',
    description: 'address the metrics listener binds (keep it private)',
    scope: 'serve',
  }),
  accessLog: setting<number>({
    name: 'HPD_ACCESS_LOG',
    parse: p.sampleRate,
    expected: 'off, full or a sampling rate greater than 0 and at most 1, such as 0.01',
    fallback: 0,
    defaultText: 'off',
    description: 'access log: off, full, or the fraction of requests logged',
    scope: 'serve',
  }),
  logLevel: setting<LogLevel>({
    name: 'HPD_LOG_LEVEL',
    parse: (text) => ((LOG_LEVELS as readonly string[]).includes(text) ? (text as LogLevel) : undefined),
    expected: `one of ${LOG_LEVELS.join(', ')}`,
    fallback: 'info',
    defaultText: 'info',
    description: 'level of the JSON logs on stdout; silent: none',
    scope: 'serve',
  }),
  dataDir: setting<string>({
    name: 'HPD_DATA_DIR',
    parse: p.path,
    expected: 'a directory',
    fallback: join(REPO_ROOT, 'data', 'builds'),
    defaultText: 'data/builds',
    description: 'builds directory (YEAR/HASH/ and YEAR/current)',
    scope: 'all',
  }),
  cacheDir: setting<string>({
    name: 'HPD_CACHE_DIR',
    parse: p.path,
    expected: 'a directory',
    fallback: join(REPO_ROOT, 'data', 'cache'),
    defaultText: 'data/cache',
    description: 'downloaded official input files',
    scope: 'all',
  }),
  stateDir: setting<string>({
    name: 'HPD_STATE_DIR',
    parse: p.path,
    expected: 'a directory',
    fallback: join(REPO_ROOT, 'var'),
    defaultText: 'var',
    description: 'keys, users, counters, OAuth keys and grants, the server pid file',
    scope: 'all',
  }),
  redisUrl: setting<string | undefined>({
    name: 'HPD_REDIS_URL',
    parse: p.redisUrl,
    expected:
      'a redis:// or rediss:// URL such as redis://127.0.0.1:6379/0, or redis+sentinel://[user:password@]host:port[,host:port…]/<master-name>[/<db>]',
    problem: p.redisUrlProblem,
    fallback: undefined,
    defaultText: 'none',
    description:
      'shared state on Redis for several instances; redis+sentinel://: the primary that Redis Sentinel names, followed across failovers; unset: the embedded store in HPD_STATE_DIR',
    scope: 'all',
    mask: maskUrlPassword,
  }),
  redisGraceSeconds: setting<number>({
    name: 'HPD_REDIS_GRACE_SECONDS',
    parse: p.decimal(0, 86_400),
    expected: 'a number of seconds from 0 to 86400',
    fallback: 300,
    defaultText: '300',
    description: 'how long known keys are served while Redis is unreachable',
    scope: 'all',
  }),
  debug: setting<boolean>({
    name: 'HPD_DEBUG',
    parse: p.flag,
    expected: '1 (print stack traces) or 0',
    fallback: false,
    defaultText: '0',
    description: '1: failures print their stack trace after the one-line message',
    scope: 'all',
  }),
} as const;

export type SettingKey = keyof typeof SETTINGS;

/** The parsed value of each setting (derived defaults still undefined). */
export type Settings = { readonly [K in SettingKey]: (typeof SETTINGS)[K] extends Setting<infer T> ? T : never };

export type SettingSource = 'default' | 'environment' | 'command line';

export interface ReadSettings {
  readonly values: Settings;
  readonly sources: Readonly<Record<SettingKey, SettingSource>>;
}

export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

/** The raw text of a setting, empty counting as unset. */
export function rawSetting(env: NodeJS.ProcessEnv, key: SettingKey): string | undefined {
  const text = env[SETTINGS[key].name];
  return text === undefined || text === '' ? undefined : text;
}

/**
 * One setting's value.
 *
 * @throws ConfigError "<NAME> must be <expected>, got "<value>"" for a refused value.
 */
export function readSetting<K extends SettingKey>(key: K, env: NodeJS.ProcessEnv = process.env): Settings[K] {
  const s = SETTINGS[key] as Setting<Settings[K]>;
  const text = rawSetting(env, key);
  if (text === undefined) return s.fallback;
  const value = s.parse(text);
  if (value === undefined) {
    const problem = s.secret === true ? undefined : s.problem?.(text);
    throw new ConfigError(
      `${s.name} must be ${s.expected}, got "${s.secret === true ? '****' : (s.mask?.(text) ?? text)}"${problem === undefined ? '' : ` (${problem})`}`,
    );
  }
  return value;
}

/** Every setting, so a mistake anywhere stops the start, not the first request that needs it. */
export function readSettings(env: NodeJS.ProcessEnv = process.env): ReadSettings {
  const values: Record<string, unknown> = {};
  const sources: Record<string, SettingSource> = {};
  for (const key of SETTING_KEYS) {
    values[key] = readSetting(key, env);
    sources[key] = rawSetting(env, key) === undefined ? 'default' : 'environment';
  }
  return { values: values as Settings, sources: sources as Record<SettingKey, SettingSource> };
}

/** HPD_DEBUG without throwing: the error handler asks it while reporting another error. */
export function debugEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[SETTINGS.debug.name] === '1';
}

/** Variables read by the benchmarks only (bench/); documented apart, never read by hpd. */
export const BENCH_VARIABLES: readonly { readonly name: string; readonly defaultText: string; readonly description: string }[] = [
  { name: 'HPD_BENCH_MS', defaultText: '1000', description: 'time per task of npm run bench:search, in ms' },
  { name: 'HPD_BENCH_YEAR', defaultText: '2025', description: 'plan year built by npm run bench:build' },
  { name: 'HPD_BENCH_RUNS', defaultText: '1', description: 'builds timed by npm run bench:build' },
  {
    name: 'HPD_WRK_URLS, HPD_WRK_PACE, HPD_WRK_OUT',
    defaultText: 'set by the harness',
    description: 'inputs of bench/wrk/rotate.lua, set by bench/lib/wrk.ts',
  },
];
