/**
 * @module A state directory with a realistic, reproducible population, written through the stores
 * themselves: users with their keys (some revoked, some used), today's and yesterday's quota counters in
 * `state.mdb`; registered clients (some too big for a page), sessions, grants with their access and
 * refresh tokens (some consumed, some destroyed) in `oauth.mdb`. Same `seed`, same records in the same order of writes.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { OAUTH_FILE, openOAuthStore } from '../../src/auth-server/lmdb-adapter.ts';
import { openLmdbStateStore } from '../../src/policy/lmdb-store.ts';
import { TIERS } from '../../src/policy/tiers.ts';

/** mulberry32: small, seeded, and the same on every platform (the benchmarks' generator). */
import { prng as seededRandom } from '../../bench/lib/util.ts';

export { seededRandom };

function hex(random: () => number, bytes: number): string {
  return Array.from({ length: bytes }, () =>
    Math.floor(random() * 256)
      .toString(16)
      .padStart(2, '0'),
  ).join('');
}

export interface Population {
  readonly users: number;
  /** Per user. */
  readonly keysPerUser: number;
  readonly clients: number;
  /** Grants (each with a session, an access token and a refresh token). */
  readonly grants: number;
}

export const REALISTIC: Population = { users: 150, keysPerUser: 2, clients: 40, grants: 150 };

/** Writes `population` into `stateDir` (created when needed). */
export async function populateState(stateDir: string, seed: number, population: Population = REALISTIC): Promise<void> {
  const random = seededRandom(seed);
  const base = Date.parse('2026-11-01T00:00:00.000Z');
  const iso = (ms: number): string => new Date(ms).toISOString();
  const store = openLmdbStateStore(stateDir);
  try {
    const counts = new Map<string, number>();
    for (let u = 0; u < population.users; u++) {
      const userId = `usr_${hex(random, 8)}`;
      const created = base + Math.floor(random() * 20 * 86_400_000);
      const tier = TIERS[Math.floor(random() * TIERS.length)]!;
      await store.putUser({ id: userId, tier, created_at: iso(created), updated_at: iso(created) });
      for (let k = 0; k < population.keysPerUser; k++) {
        await store.putKey({
          id: `key_${hex(random, 8)}`,
          hash: createHash('sha256').update(hex(random, 24)).digest('hex'),
          user_id: userId,
          label: random() < 0.5 ? null : `service ${u}.${k} of ${'abcdefgh'.slice(0, 1 + Math.floor(random() * 8))}`,
          tier_at_creation: tier,
          created_at: iso(created + k * 1000),
          last_used_at: random() < 0.6 ? iso(created + 86_400_000) : null,
          revoked_at: random() < 0.15 ? iso(created + 2 * 86_400_000) : null,
        });
      }
      counts.set(userId, Math.floor(random() * 5000));
    }
    await store.saveCounters('2026-11-24', counts);
    await store.saveCounters('2026-11-25', new Map([...counts].map(([id, n]) => [id, n >> 1])));
  } finally {
    await store.close();
  }
  const now = base + 25 * 86_400_000;
  const oauth = openOAuthStore(join(stateDir, OAUTH_FILE), () => now);
  try {
    const clientIds: string[] = [];
    for (let c = 0; c < population.clients; c++) {
      const id = hex(random, 16);
      clientIds.push(id);
      // One client in ten registers many redirect URIs: a record too big for a page, on overflow pages.
      const extra = c % 10 === 9 ? Array.from({ length: 150 + c }, (_, i) => `https://tenant${i}.example.com/oauth/callback`) : [];
      await oauth.adapterFor('Client').upsert(
        id,
        {
          client_id: id,
          client_name: `MCP client ${c}`,
          redirect_uris: [`http://127.0.0.1:${20_000 + c}/callback`, `https://app${c}.example.com/oauth/callback`, ...extra],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          client_id_issued_at: Math.floor(now / 1000) - c * 3600,
        },
        undefined,
      );
    }
    for (let g = 0; g < population.grants; g++) {
      const grantId = hex(random, 21);
      const clientId = clientIds[Math.floor(random() * clientIds.length)]!;
      const accountId = `usr_${hex(random, 8)}`;
      const iat = Math.floor(now / 1000) - Math.floor(random() * 86_400);
      await oauth.adapterFor('Grant').upsert(
        grantId,
        {
          jti: grantId,
          kind: 'Grant',
          clientId,
          accountId,
          iat,
          exp: iat + 14 * 86_400,
          openid: { scope: 'openid' },
          resources: { 'http://127.0.0.1:8081/mcp': 'plans:read' },
        },
        14 * 86_400,
      );
      const session = hex(random, 21);
      await oauth.adapterFor('Session').upsert(
        session,
        {
          jti: session,
          uid: hex(random, 21),
          kind: 'Session',
          accountId,
          loginTs: iat,
          iat,
          exp: iat + 14 * 86_400,
          authorizations: { [clientId]: { sid: hex(random, 21), grantId } },
        },
        14 * 86_400,
      );
      for (const model of ['AccessToken', 'RefreshToken'] as const) {
        const id = hex(random, 32);
        await oauth.adapterFor(model).upsert(
          id,
          {
            jti: id,
            kind: model,
            grantId,
            clientId,
            accountId,
            iat,
            exp: iat + (model === 'AccessToken' ? 3600 : 14 * 86_400),
            scope: 'plans:read',
            sessionUid: session,
          },
          model === 'AccessToken' ? 3600 : 14 * 86_400,
        );
        if (model === 'RefreshToken' && random() < 0.2) await oauth.adapterFor(model).consume(id);
        if (model === 'AccessToken' && random() < 0.2) await oauth.adapterFor(model).destroy(id);
      }
      if (random() < 0.1) await oauth.adapterFor('Grant').revokeByGrantId(grantId);
    }
  } finally {
    await oauth.close();
  }
}
