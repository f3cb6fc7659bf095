/** @module Which client a request of the authorization server comes from, for per-address limits. */
import type { IncomingMessage } from 'node:http';
import { clientAddressOf } from '../http/proxy-protocol.ts';

/**
 * The address per-client limits key on (log-in throttle, sign-up, registration limit): the client a
 * trusted proxy named in its PROXY protocol header (HPD_TRUSTED_PROXIES), else the socket's peer.
 * X-Forwarded-For is never read: any client can write one, and the PROXY header makes it unnecessary.
 */
export function clientAddress(req: IncomingMessage): string | undefined {
  return clientAddressOf(req.socket);
}
