/**
 * @module The forms `HPD_REDIS_URL` takes: one Redis server (`redis://` or `rediss://`, read by ioredis
 * itself), or a primary found through Redis Sentinel,
 * `redis+sentinel://[user:password@]host[:port][,host[:port]…]/<master-name>[/<db>][?sentinelUsername=…&sentinelPassword=…]`.
 *
 * The user and password of the sentinel form are the data servers' (primary and replicas); sentinels
 * that require their own credentials take them from the query. The sentinel port defaults to 26379.
 * Why a hand-written parser: WHATWG URL refuses a host list (`h1:26379,h2:26379`).
 *
 * Passwords never reach a log line or an error message: `maskRedisUrl` hides them in any text, even
 * one that does not parse (an error message must not print the password it refuses).
 */

export interface SentinelAddress {
  readonly host: string;
  readonly port: number;
}

export type RedisTarget =
  | { readonly kind: 'server'; readonly url: string }
  | {
      readonly kind: 'sentinel';
      readonly sentinels: readonly SentinelAddress[];
      /** The master group name the sentinels monitor. */
      readonly name: string;
      readonly db: number;
      readonly username?: string;
      readonly password?: string;
      readonly sentinelUsername?: string;
      readonly sentinelPassword?: string;
    };

export const SENTINEL_SCHEME = 'redis+sentinel:';
export const DEFAULT_SENTINEL_PORT = 26379;
const SENTINEL_QUERY = new Set(['sentinelUsername', 'sentinelPassword']);

/** The target of `text`, or what is wrong with it (one phrase, password masked). */
export function parseRedisUrl(text: string): RedisTarget | { readonly problem: string } {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*:)\/\//.exec(text)?.[1]?.toLowerCase();
  if (scheme === 'redis:' || scheme === 'rediss:') {
    const u = URL.parse(text);
    if (u === null || u.hostname === '') return { problem: 'no host' };
    if (u.port !== '' && Number(u.port) === 0) return { problem: 'port 0' };
    return { kind: 'server', url: text };
  }
  if (scheme !== SENTINEL_SCHEME) return { problem: 'the scheme must be redis://, rediss:// or redis+sentinel://' };
  return parseSentinelUrl(text.slice(SENTINEL_SCHEME.length + 2));
}

function parseSentinelUrl(rest: string): RedisTarget | { readonly problem: string } {
  const hashAt = rest.indexOf('#');
  if (hashAt !== -1) return { problem: 'a fragment (#…) has no meaning here' };
  const queryAt = rest.indexOf('?');
  const query = queryAt === -1 ? '' : rest.slice(queryAt + 1);
  const beforeQuery = queryAt === -1 ? rest : rest.slice(0, queryAt);
  // The user information ends at the last '@' before the path (a password may hold '@' only encoded,
  // but an unencoded one still must not end up in a host name).
  const slash = beforeQuery.indexOf('/', beforeQuery.lastIndexOf('@') + 1);
  const authority = slash === -1 ? beforeQuery : beforeQuery.slice(0, slash);
  const path = slash === -1 ? '' : beforeQuery.slice(slash + 1);
  const at = authority.lastIndexOf('@');
  const userInfo = at === -1 ? undefined : authority.slice(0, at);
  const hostList = at === -1 ? authority : authority.slice(at + 1);

  const sentinels: SentinelAddress[] = [];
  for (const item of hostList.split(',')) {
    const address = parseHostPort(item);
    if (typeof address === 'string') return { problem: address };
    sentinels.push(address);
  }

  const segments = path.split('/');
  const name = decode(segments[0] ?? '');
  if (name === undefined || name === '') return { problem: 'no master name: the path must be /<master-name> or /<master-name>/<db>' };
  if (segments.length > 2) return { problem: 'the path must be /<master-name> or /<master-name>/<db>' };
  let db = 0;
  if (segments.length === 2) {
    if (!/^(0|[1-9][0-9]{0,4})$/.test(segments[1]!)) return { problem: `database "${segments[1]}" is not a number from 0 to 99999` };
    db = Number(segments[1]);
  }

  let username: string | undefined;
  let password: string | undefined;
  if (userInfo !== undefined) {
    const colon = userInfo.indexOf(':');
    username = decode(colon === -1 ? userInfo : userInfo.slice(0, colon));
    password = colon === -1 ? undefined : decode(userInfo.slice(colon + 1));
    if (username === undefined || (password === undefined && colon !== -1))
      return { problem: 'the user or password is not validly percent-encoded' };
  }

  const params = new URLSearchParams(query);
  for (const key of params.keys()) {
    if (!SENTINEL_QUERY.has(key)) return { problem: `unknown parameter "${key}" (known: ${[...SENTINEL_QUERY].join(', ')})` };
  }
  const sentinelUsername = params.get('sentinelUsername') ?? undefined;
  const sentinelPassword = params.get('sentinelPassword') ?? undefined;
  return {
    kind: 'sentinel',
    sentinels,
    name,
    db,
    ...(username === undefined || username === '' ? {} : { username }),
    ...(password === undefined || password === '' ? {} : { password }),
    ...(sentinelUsername === undefined || sentinelUsername === '' ? {} : { sentinelUsername }),
    ...(sentinelPassword === undefined || sentinelPassword === '' ? {} : { sentinelPassword }),
  };
}

/** `host`, `host:port`, `[v6]` or `[v6]:port`; a phrase naming what is wrong otherwise. */
function parseHostPort(item: string): SentinelAddress | string {
  if (item === '') return 'a sentinel address is empty (expected host:port[,host:port…])';
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9._-]+))(?::([0-9]*))?$/.exec(item);
  if (m === null) return `sentinel address "${item}" is not host or host:port`;
  const host = m[1] ?? m[2]!;
  if (m[3] === undefined) return { host, port: DEFAULT_SENTINEL_PORT };
  const port = /^[1-9][0-9]{0,4}$/.test(m[3]) ? Number(m[3]) : 0;
  if (port < 1 || port > 65535) return `sentinel address "${item}" has no port from 1 to 65535`;
  return { host, port };
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * `text` with every password replaced by `mask`: the user information's and the query's
 * sentinelPassword. Works on text that does not parse as well.
 */
export function maskRedisUrl(text: string, mask: string): string {
  let out = text;
  const start = out.indexOf('://');
  if (start !== -1) {
    const queryAt = out.indexOf('?', start);
    const end = queryAt === -1 ? out.length : queryAt;
    const at = out.lastIndexOf('@', end - 1);
    if (at > start) {
      const colon = out.indexOf(':', start + 3);
      if (colon !== -1 && colon < at && colon + 1 < at) out = `${out.slice(0, colon + 1)}${mask}${out.slice(at)}`;
    }
  }
  return out.replace(/([?&]sentinelPassword=)[^&#]*/g, (_, key: string) => `${key}${mask}`);
}
