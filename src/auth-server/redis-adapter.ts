/**
 * @module oidc-provider storage on Redis, for several `hpd serve` instances behind one load balancer:
 * a client registered through one instance, or a refresh token it issued, must be known
 * to every other. Same contract as the LMDB store (lmdb-adapter.ts), which stays the default.
 *
 * Layout (all under `prefix`, default `hpd:oauth:`):
 * - `rec:<model>:<id>` hash { payload (JSON), expiresAt (ms, '' = never), consumed (s), and the
 *   index values it was filed under: uid, userCode, grantId }
 * - `uid:<model>:<uid>` → id          (Session.findByUid)
 * - `code:<model>:<userCode>` → id    (findByUserCode, device flow)
 * - `grant:<grantId>` set of `<model>:<id>`  (revokeByGrantId)
 * Model names never contain ':', so `<model>:<id>` splits at its first colon whatever the id holds.
 *
 * Why a hash and not one JSON string: `consume` then only adds a field, keeping the TTL and needing no
 * JSON in Lua (cjson turns empty arrays into objects, which would corrupt client metadata). The index
 * values are kept as fields so the scripts can unindex a record without parsing its payload.
 *
 * Expiry: Redis deletes records and indexes itself (relative PX TTLs, so a record lives as long as the
 * provider asked, whatever the clocks of the instances say); sweep() has nothing to do. `expiresAt`,
 * on the injected clock, is still checked on every read, so an expired record is invisible at once
 * even where Redis has not reached it yet, and tests can age records without waiting. A grant's set
 * lives as long as its longest-lived member; entries of members that expired earlier are harmless
 * (deleting a missing key is a no-op).
 *
 * Atomicity: upsert (record + its indexes) and grant revocation are Lua scripts, so another instance
 * never sees a record without its indexes, nor half a revoked grant. The revocation script builds
 * member keys from the set's contents, which standalone Redis (the deployment this serves) allows and
 * Redis Cluster would not.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { CLOCK_TOLERANCE_SECONDS, GRANTABLE, type OAuthStore } from './lmdb-adapter.ts';

export const DEFAULT_OAUTH_PREFIX = 'hpd:oauth:';

export interface RedisOAuthStoreOptions {
  /** Prepended to every key; default DEFAULT_OAUTH_PREFIX. */
  prefix?: string;
  /** Milliseconds since the epoch; injectable so tests can age records. */
  clock?: () => number;
}

/** Shared by both scripts: drops the index entries a record was filed under. */
const UNINDEX = `
local function unindex(prefix, model, id, uid, code, grant)
  if uid then
    local k = prefix .. 'uid:' .. model .. ':' .. uid
    if redis.call('GET', k) == id then redis.call('DEL', k) end
  end
  if code then
    local k = prefix .. 'code:' .. model .. ':' .. code
    if redis.call('GET', k) == id then redis.call('DEL', k) end
  end
  if grant then redis.call('SREM', prefix .. 'grant:' .. grant, model .. ':' .. id) end
end
local function opt(v) if v == '' then return false end return v end
`;

/**
 * KEYS[1] record key. ARGV: prefix, model, id, payload, ttlMs ('' = none), expiresAt, uid, userCode,
 * grantId ('' = not indexed).
 */
const UPSERT = `${UNINDEX}
local prefix, model, id, ttl = ARGV[1], ARGV[2], ARGV[3], opt(ARGV[5])
local uid, code, grant = opt(ARGV[7]), opt(ARGV[8]), opt(ARGV[9])
local old = redis.call('HMGET', KEYS[1], 'uid', 'userCode', 'grantId')
unindex(prefix, model, id, old[1], old[2], old[3])
redis.call('DEL', KEYS[1])
local fields = {'payload', ARGV[4], 'expiresAt', ARGV[6]}
if uid then table.insert(fields, 'uid'); table.insert(fields, uid) end
if code then table.insert(fields, 'userCode'); table.insert(fields, code) end
if grant then table.insert(fields, 'grantId'); table.insert(fields, grant) end
redis.call('HSET', KEYS[1], unpack(fields))
if ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
local function index(k)
  if ttl then redis.call('SET', k, id, 'PX', ttl) else redis.call('SET', k, id) end
end
if uid then index(prefix .. 'uid:' .. model .. ':' .. uid) end
if code then index(prefix .. 'code:' .. model .. ':' .. code) end
if grant then
  local gk = prefix .. 'grant:' .. grant
  local left = redis.call('PTTL', gk)
  redis.call('SADD', gk, model .. ':' .. id)
  -- The set must outlive every member: extend it, never shorten it, and a member without expiry pins it.
  if not ttl then
    redis.call('PERSIST', gk)
  elseif left == -2 or (left >= 0 and left < tonumber(ttl)) then
    redis.call('PEXPIRE', gk, ttl)
  end
end
return 1
`;

/** KEYS[1] record key. ARGV: consumed (seconds). A missing record stays missing (HSET would create it without TTL). */
const CONSUME = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'consumed', ARGV[1]) end
return 1
`;

/** KEYS[1] grant set key. ARGV: prefix. */
const REVOKE_GRANT = `${UNINDEX}
local prefix = ARGV[1]
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local colon = string.find(member, ':', 1, true)
  local model, id = string.sub(member, 1, colon - 1), string.sub(member, colon + 1)
  local rec = prefix .. 'rec:' .. model .. ':' .. id
  local f = redis.call('HMGET', rec, 'uid', 'userCode', 'grantId')
  unindex(prefix, model, id, f[1], f[2], f[3])
  redis.call('DEL', rec)
end
redis.call('DEL', KEYS[1])
return 1
`;

/** KEYS[1] record key. ARGV: prefix, model, id. */
const DESTROY = `${UNINDEX}
local f = redis.call('HMGET', KEYS[1], 'uid', 'userCode', 'grantId')
unindex(ARGV[1], ARGV[2], ARGV[3], f[1], f[2], f[3])
redis.call('DEL', KEYS[1])
return 1
`;

interface LuaScript {
  readonly source: string;
  readonly sha: string;
}

function lua(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

const SCRIPTS = { upsert: lua(UPSERT), consume: lua(CONSUME), revokeGrant: lua(REVOKE_GRANT), destroy: lua(DESTROY) };

/** EVALSHA, loading the script on NOSCRIPT (a restarted or flushed Redis forgets loaded scripts). */
async function run(redis: Redis, script: LuaScript, keys: string[], args: Array<string | number>): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return redis.eval(script.source, keys.length, ...keys, ...args);
  }
}

/**
 * The Redis-backed provider store. `close()` leaves `redis` open: the caller owns the connection and
 * may share it with other stores.
 *
 * @example const oauth = openRedisOAuthStore(redis); new Provider(issuer, { adapter: oauth.adapterFor });
 */
export function openRedisOAuthStore(redis: Redis, opts: RedisOAuthStoreOptions = {}): OAuthStore {
  const prefix = opts.prefix ?? DEFAULT_OAUTH_PREFIX;
  const clock = opts.clock ?? Date.now;
  const recordKey = (model: string, id: string): string => `${prefix}rec:${model}:${id}`;

  const read = async (model: string, id: string): Promise<AdapterPayload | undefined> => {
    const [payload, expiresAt, consumed] = await redis.hmget(recordKey(model, id), 'payload', 'expiresAt', 'consumed');
    if (payload === null) return undefined;
    if (expiresAt !== null && expiresAt !== '' && Number(expiresAt) <= clock()) return undefined;
    const parsed = JSON.parse(payload) as AdapterPayload;
    return consumed === null ? parsed : { ...parsed, consumed: Number(consumed) };
  };

  const readIndexed = async (model: string, kind: 'uid' | 'code', value: string): Promise<AdapterPayload | undefined> => {
    const id = await redis.get(`${prefix}${kind}:${model}:${value}`);
    return id === null ? undefined : read(model, id);
  };

  class RedisAdapter implements Adapter {
    readonly #model: string;

    constructor(model: string) {
      this.#model = model;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
      const model = this.#model;
      const ttlMs = typeof expiresIn === 'number' ? (expiresIn + CLOCK_TOLERANCE_SECONDS) * 1000 : undefined;
      const expiresAt = ttlMs === undefined ? '' : String(clock() + ttlMs);
      const uid = model === 'Session' && typeof payload.uid === 'string' ? payload.uid : '';
      const userCode = typeof payload.userCode === 'string' ? payload.userCode : '';
      const grantId = GRANTABLE.has(model) && typeof payload.grantId === 'string' ? payload.grantId : '';
      // PX rejects 0 and negatives; a record already expired on arrival still must replace the old one.
      const ttlArg = ttlMs === undefined ? '' : String(Math.max(1, Math.ceil(ttlMs)));
      await run(
        redis,
        SCRIPTS.upsert,
        [recordKey(model, id)],
        [prefix, model, id, JSON.stringify(payload), ttlArg, expiresAt, uid, userCode, grantId],
      );
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      return read(this.#model, id);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return readIndexed(this.#model, 'uid', uid);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return readIndexed(this.#model, 'code', userCode);
    }

    async consume(id: string): Promise<void> {
      // Seconds on the system clock, as the provider's own epochTime() reads them.
      await run(redis, SCRIPTS.consume, [recordKey(this.#model, id)], [Math.floor(Date.now() / 1000)]);
    }

    async destroy(id: string): Promise<void> {
      await run(redis, SCRIPTS.destroy, [recordKey(this.#model, id)], [prefix, this.#model, id]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      // Every member of the grant, whatever this adapter's model (see lmdb-adapter.ts).
      await run(redis, SCRIPTS.revokeGrant, [`${prefix}grant:${grantId}`], [prefix]);
    }
  }

  const adapters = new Map<string, RedisAdapter>();

  return {
    adapterFor(model: string): Adapter {
      let adapter = adapters.get(model);
      if (adapter === undefined) {
        adapter = new RedisAdapter(model);
        adapters.set(model, adapter);
      }
      return adapter;
    },
    // Redis expires keys itself.
    sweep: () => Promise.resolve(0),
    close: () => Promise.resolve(),
  };
}
