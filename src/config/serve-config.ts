/**
 * @module The typed configuration of `hpd serve`: every setting validated, the derived defaults filled
 * in (the public URLs from the host and ports), units converted (ms, bytes). `hpd config` shows the
 * same values, so what it prints is what the server would use.
 */
import { availableParallelism } from 'node:os';
import type { LogLevel } from '../observability/log-levels.ts';
import type { Tier } from '../policy/tiers.ts';
import { ConfigError } from './config-error.ts';
import { readSettings, SETTINGS, type SettingKey, type Settings, type SettingSource } from './settings.ts';

export interface ServeConfig {
  readonly host: string;
  readonly port: number;
  readonly baseUrl: string;
  readonly upgradeUrl: string;
  readonly workers: number;
  readonly mcpPort: number;
  readonly mcpUrl: string;
  readonly allowedOrigins: readonly string[];
  readonly mcpIdleMs: number;
  readonly authPort: number;
  readonly authUrl: string;
  /** Set: an external issuer, and the embedded authorization server does not start. */
  readonly externalIssuer: string | undefined;
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
  readonly restMaxConnections: number;
  readonly restMaxConnectionsPerAddress: number;
  /** HPD_TRUSTED_PROXIES: addresses and CIDR blocks (src/http/trusted-proxies.ts). */
  readonly trustedProxies: readonly string[];
  readonly responseCacheBytes: number;
  readonly searchCacheBytes: number;
  readonly drainMs: number;
  /** Part of the drain during which readiness fails but every listener still accepts (at most half of it). */
  readonly drainNoticeMs: number;
  readonly watchBuilds: boolean;
  /** Accounts the sign-up form creates in an hour, all addresses together; 0: no such limit. */
  readonly signupsPerHour: number;
  readonly limits: Readonly<Record<Tier, number>>;
  /** Undefined: no metrics listener. */
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /** Fraction of requests in the access log: 0 off, 1 full. */
  readonly accessLogRate: number;
  readonly logLevel: LogLevel;
  readonly dataDir: string;
  /** HPD_DATA_DIR unset (or naming the default): `hpd serve` may build the default dataset there. */
  readonly dataDirIsDefault: boolean;
  readonly cacheDir: string;
  readonly stateDir: string;
  /** Undefined: the embedded store in stateDir. */
  readonly redisUrl: string | undefined;
  readonly redisGraceMs: number;
  /** Where each setting came from, for `hpd config`. */
  readonly sources: Readonly<Record<SettingKey, SettingSource>>;
  /** Each setting's effective value as it would be written in the environment, for `hpd config`. */
  readonly effective: Readonly<Record<SettingKey, string>>;
}

/** `--workers N` given on the command line wins over HPD_WORKERS. */
export interface ServeOverrides {
  readonly workers?: number;
}

/**
 * @throws ConfigError naming the first variable whose value is refused.
 */
export function serveConfig(env: NodeJS.ProcessEnv = process.env, overrides: ServeOverrides = {}): ServeConfig {
  const { values: v, sources } = readSettings(env);
  // Links name a reachable address: a wildcard bind is reached through loopback on this host.
  const linkHost = v.host === '0.0.0.0' || v.host === '::' ? '127.0.0.1' : v.host;
  const baseUrl = v.baseUrl ?? `http://${linkHost}:${v.port}`;
  const derived = {
    baseUrl,
    upgradeUrl: v.upgradeUrl ?? `${baseUrl}/pricing`,
    mcpUrl: v.mcpUrl ?? `http://${linkHost}:${v.mcpPort}/mcp`,
    authUrl: v.authUrl ?? `http://${linkHost}:${v.authPort}`,
    workers: overrides.workers ?? v.workers ?? availableParallelism(),
  };
  checkOAuthUrls(derived, v);
  return {
    host: v.host,
    port: v.port,
    ...derived,
    mcpPort: v.mcpPort,
    allowedOrigins: v.mcpAllowedOrigins,
    mcpIdleMs: v.mcpIdleMinutes * 60_000,
    authPort: v.authPort,
    externalIssuer: v.authIssuer,
    maxConnections: v.maxConnections,
    maxConnectionsPerAddress: v.maxConnectionsPerAddress,
    restMaxConnections: v.restMaxConnections,
    restMaxConnectionsPerAddress: v.restMaxConnectionsPerAddress,
    trustedProxies: v.trustedProxies,
    responseCacheBytes: Math.round(v.responseCacheMb * 1024 * 1024),
    searchCacheBytes: Math.round(v.searchCacheMb * 1024 * 1024),
    drainMs: Math.round(v.drainSeconds * 1000),
    drainNoticeMs: Math.round(Math.min(v.drainNoticeSeconds, v.drainSeconds / 2) * 1000),
    watchBuilds: v.watchBuilds,
    signupsPerHour: v.signupsPerHour,
    limits: Object.freeze({ free: v.quotaFree, pro: v.quotaPro, enterprise: v.quotaEnterprise }),
    metricsPort: v.metricsPort,
    metricsHost: v.metricsHost,
    accessLogRate: v.accessLog,
    logLevel: v.logLevel,
    dataDir: v.dataDir,
    dataDirIsDefault: v.dataDir === SETTINGS.dataDir.fallback,
    cacheDir: v.cacheDir,
    stateDir: v.stateDir,
    redisUrl: v.redisUrl,
    redisGraceMs: Math.round(v.redisGraceSeconds * 1000),
    sources: overrides.workers === undefined ? sources : { ...sources, workers: 'command line' },
    effective: effectiveText(v, derived),
  };
}

function effectiveText(
  v: Settings,
  derived: {
    readonly baseUrl: string;
    readonly upgradeUrl: string;
    readonly mcpUrl: string;
    readonly authUrl: string;
    readonly workers: number;
  },
): Record<SettingKey, string> {
  const out = {} as Record<SettingKey, string>;
  for (const key of Object.keys(SETTINGS) as SettingKey[]) {
    const value: unknown = key in derived ? derived[key as keyof typeof derived] : v[key];
    out[key] = display(key, value);
  }
  return out;
}

function display(key: SettingKey, value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (Array.isArray(value)) return value.join(',');
  if (key === 'accessLog') return value === 0 ? 'off' : value === 1 ? 'full' : String(value);
  return String(value);
}

/**
 * What the OAuth side needs beyond an http(s) URL (startAuthServer and the MCP server take these as
 * given): the MCP resource identifier has no fragment (RFC 8707), and the embedded issuer is a bare
 * origin naming the port clients reach (routes are served at its root).
 * @throws ConfigError naming the variable to set.
 */
function checkOAuthUrls(derived: { readonly mcpUrl: string; readonly authUrl: string }, v: Settings): void {
  if (derived.mcpUrl.includes('#')) throw new ConfigError(`HPD_MCP_URL must be a URL without fragment (#…), got "${derived.mcpUrl}"`);
  // A derived issuer on HPD_AUTH_PORT=0 is refused only when the server starts (startServices): other
  // commands, and a serve that stops earlier, do not care.
  if (v.authIssuer !== undefined || v.authUrl === undefined) return;
  const u = URL.parse(v.authUrl);
  if (u === null || u.origin !== v.authUrl)
    throw new ConfigError(`HPD_AUTH_URL must be an http(s) origin without path, such as https://auth.example.com, got "${v.authUrl}"`);
  if (u.port === '0') throw new ConfigError(`HPD_AUTH_URL must name the port clients reach, not 0, got "${v.authUrl}"`);
}
