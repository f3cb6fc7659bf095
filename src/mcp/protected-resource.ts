/**
 * @module The RFC 9728 protected-resource metadata of the MCP endpoint: where it is served (the three
 * paths clients try) and the document naming the authorization server.
 */
import type { ServerResponse } from 'node:http';
import { methodNotAllowed } from '../operations/problems.ts';
import { OAUTH_SCOPES } from '../policy/oauth-scopes.ts';
import { sendProblem, type ProblemLinks } from './http-replies.ts';

export interface ProtectedResource {
  /** The metadata URL a 401 challenge names. */
  readonly url: string;
  readonly paths: ReadonlySet<string>;
  /** Answers a request for one of `paths`. */
  answer(res: ServerResponse, method: string, path: string, links: ProblemLinks): void;
}

export function protectedResource(mcpUrl: string, mcpPath: string, authServerUrl: string): ProtectedResource {
  const suffix = mcpPath === '/' ? '' : mcpPath;
  const paths = new Set([
    `${suffix}/.well-known/oauth-protected-resource`,
    `/.well-known/oauth-protected-resource${suffix}`,
    '/.well-known/oauth-protected-resource',
  ]);
  const body = JSON.stringify({
    resource: mcpUrl,
    authorization_servers: [authServerUrl],
    scopes_supported: OAUTH_SCOPES,
    bearer_methods_supported: ['header'],
    resource_signing_alg_values_supported: ['RS256'],
  });
  return {
    url: `${mcpUrl.replace(/\/+$/, '')}/.well-known/oauth-protected-resource`,
    paths,
    answer(res, method, path, links) {
      const cors = { 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=3600' };
      if (method === 'OPTIONS') {
        res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET, HEAD, OPTIONS', 'access-control-allow-headers': '*' });
        res.end();
        return;
      }
      if (method !== 'GET' && method !== 'HEAD') {
        sendProblem(res, links, methodNotAllowed(method, 'GET, HEAD'), path, { allow: 'GET, HEAD' });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...cors });
      res.end(method === 'HEAD' ? undefined : body);
    },
  };
}
