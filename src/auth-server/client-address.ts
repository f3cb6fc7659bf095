/** @module Which client a request of the authorization server comes from, for per-address limits. */
import type { IncomingMessage } from 'node:http';

/**
 * The address per-client limits key on (log-in throttle, registration limit). Behind a trusted proxy every connection comes from the proxy, so
 * the last X-Forwarded-For entry (the one the proxy itself appended; earlier ones are whatever the
 * client sent) stands for the client; without one, the socket's peer.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string | undefined {
  if (trustProxy) {
    const header = req.headers['x-forwarded-for'];
    const list = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const last = list.at(-1);
    if (last !== undefined) return last;
  }
  return req.socket.remoteAddress;
}
