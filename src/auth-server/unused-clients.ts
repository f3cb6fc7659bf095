/**
 * @module Dynamically registered clients that never complete an authorization expire.
 *
 * Registration is open to anyone (MCP clients register themselves), and a registered client was kept
 * forever: 80,000 registrations from one client in 66 s grew oauth.mdb from 20 KB to 110 MB, never
 * reclaimed. A client is now stored with a lifetime of {@link UNUSED_CLIENT_TTL_S}; the first grant made
 * for it (a user completed an authorization) stores it again without one. Expired clients go with the
 * store's own expiry (the LMDB sweep, Redis key expiry). With the per-address registration limit
 * (registration-limit.ts) this bounds what one address can leave stored. Works over either store.
 */
import type { Adapter } from 'oidc-provider';
import type { OAuthStore } from './lmdb-adapter.ts';

/** A day: an MCP client registers just before its user signs in, minutes at most. */
export const UNUSED_CLIENT_TTL_S = 86_400;

/** `store` with clients given a lifetime until their first grant. */
export function expireUnusedClients(store: OAuthStore, ttlSeconds = UNUSED_CLIENT_TTL_S): OAuthStore {
  const clients = store.adapterFor('Client');
  /** Clients this process has made permanent: a grant per refresh must not rewrite its client each time. */
  const kept = new Set<string>();
  const keep = async (clientId: string): Promise<void> => {
    if (kept.has(clientId)) return;
    const payload = await clients.find(clientId);
    // Pre-registered clients live in the configuration, not in the store: nothing to keep.
    if (payload !== undefined) await clients.upsert(clientId, payload, undefined);
    kept.add(clientId);
  };
  const wrapped = new Map<string, Adapter>();
  return {
    adapterFor(model) {
      let adapter = wrapped.get(model);
      if (adapter !== undefined) return adapter;
      const inner = store.adapterFor(model);
      if (model === 'Client') {
        adapter = delegate(inner, (id, payload, expiresIn) =>
          inner.upsert(id, payload, expiresIn ?? (kept.has(id) ? undefined : ttlSeconds)),
        );
      } else if (model === 'Grant') {
        adapter = delegate(inner, async (id, payload, expiresIn) => {
          await inner.upsert(id, payload, expiresIn);
          if (typeof payload.clientId === 'string') await keep(payload.clientId);
        });
      } else adapter = inner;
      wrapped.set(model, adapter);
      return adapter;
    },
    sweep: () => store.sweep(),
    close: () => store.close(),
  };
}

/** `inner` with another upsert; every other method is inner's own, called on inner. */
function delegate(inner: Adapter, upsert: Adapter['upsert']): Adapter {
  return {
    upsert,
    find: (id) => inner.find(id),
    findByUserCode: (code) => inner.findByUserCode(code),
    findByUid: (uid) => inner.findByUid(uid),
    consume: (id) => inner.consume(id),
    destroy: (id) => inner.destroy(id),
    revokeByGrantId: (grantId) => inner.revokeByGrantId(grantId),
  };
}
