/**
 * @module The MCP server: Streamable HTTP (protocol 2025-11-25 and the older revisions the SDK
 * negotiates) on a `node:http` listener beside the REST front.
 *
 * Every HTTP request is authenticated (API key or OAuth access token) before it reaches the SDK
 * transport; a 401 points clients at the RFC 9728 protected-resource metadata, which names the
 * authorization server. Tools map onto the REST operations (src/mcp/tools.ts) and use the same policy:
 * tier rules, the shared daily counter (one unit per tools/call), the same problem documents.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { CallToolRequestSchema, ErrorCode, isInitializeRequest, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toListenError } from '../http/listen-error.ts';
import { createNodeListener, type ListenerLimits, type NodeListener } from '../http/node-listener.ts';
import { requestPath } from '../http/request-target.ts';
import type { DataRegistry } from '../operations/data-registry.ts';
import { asLiveRegistry, type LiveRegistry } from '../operations/live-registry.ts';
import { execute, type OperationContext } from '../operations/operation.ts';
import { toProblemBody, type ProblemSpec } from '../operations/problems.ts';
import { RATE_LIMITED } from '../http/front-problems.ts';
import { OAUTH_SCOPES } from '../policy/oauth-scopes.ts';
import type { Quota } from '../policy/quota.ts';
import type { AccessLog } from '../observability/access-log.ts';
import type { HealthProbes } from '../observability/health-probes.ts';
import { createNodeRequestObserver } from '../observability/node-request-observer.ts';
import type { RequestMetrics } from '../observability/request-metrics.ts';
import type { CredentialVerifier, Principal } from './credentials.ts';
import { findInvalidParams, INVALID_PARAMS } from './request-params.ts';
import { SessionRegistry } from './sessions.ts';
import { TOOL_BY_NAME, TOOLS, toolArgsToRequest, toolField, type ToolDefinition } from './tools.ts';

const MAX_BODY = 1 << 20;

export interface McpServerConfig {
  /** A live registry follows newly published builds; a plain one is served as it is. */
  readonly registry: DataRegistry | LiveRegistry;
  readonly quota: Quota;
  readonly verifier: CredentialVerifier;
  /** The MCP resource identifier and endpoint, e.g. `http://127.0.0.1:8081/mcp`. */
  readonly mcpUrl: string;
  /** Issuer of the authorization server named in the protected-resource metadata. */
  readonly authServerUrl: string;
  /** REST origin: problem `type`s and links in tool results are REST URLs. */
  readonly baseUrl: string;
  readonly upgradeUrl: string;
  /** Browser origins allowed to call the endpoint (requests without Origin are always allowed). */
  readonly allowedOrigins?: readonly string[];
  readonly idleMs?: number;
  readonly maxSessionsPerPrincipal?: number;
  readonly clock?: () => number;
  readonly version?: string;
  /** Timeouts and connection cap of the listener (defaults: DEFAULT_LISTENER_LIMITS). */
  readonly listenerLimits?: Partial<ListenerLimits>;
  /** /healthz and /readyz (src/observability/health-probes.ts); absent: those paths are 404. */
  readonly health?: HealthProbes;
  /** The main thread's request counters (/metrics). */
  readonly metrics?: RequestMetrics;
  readonly accessLog?: AccessLog;
  /** Unexpected errors; default: one line on stderr. */
  readonly onError?: (err: unknown) => void;
}

export interface McpHttpServer {
  listen(port: number, host?: string): Promise<number>;
  /**
   * Stops accepting, ends the sessions (and their SSE streams), lets requests in flight finish for up
   * to `graceMs` (default 0: close at once), then closes every connection.
   */
  close(graceMs?: number): Promise<void>;
  /** Live MCP sessions (for tests and readiness). */
  readonly sessionCount: number;
}

interface Live {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
}

export function createMcpServer(config: McpServerConfig): McpHttpServer {
  const clock = config.clock ?? Date.now;
  const mcp = new URL(config.mcpUrl);
  const mcpPath = mcp.pathname.replace(/\/+$/, '') || '/';
  const prmUrl = `${config.mcpUrl.replace(/\/+$/, '')}/.well-known/oauth-protected-resource`;
  const prmPaths = new Set([
    `${mcpPath === '/' ? '' : mcpPath}/.well-known/oauth-protected-resource`,
    `/.well-known/oauth-protected-resource${mcpPath === '/' ? '' : mcpPath}`,
    '/.well-known/oauth-protected-resource',
  ]);
  const prmBody = JSON.stringify({
    resource: config.mcpUrl,
    authorization_servers: [config.authServerUrl],
    scopes_supported: OAUTH_SCOPES,
    bearer_methods_supported: ['header'],
    resource_signing_alg_values_supported: ['RS256'],
  });
  const allowedOrigins = new Set([mcp.origin, ...(config.allowedOrigins ?? [])]);
  const live = asLiveRegistry(config.registry);
  const sessions = new SessionRegistry<Live>({
    idleMs: config.idleMs ?? 30 * 60_000,
    maxPerOwner: config.maxSessionsPerPrincipal ?? 20,
    clock,
    dispose: async (live) => {
      await live.transport.close().catch(() => {});
      await live.server.close().catch(() => {});
    },
  });

  const problem = (spec: ProblemSpec, instance: string): Record<string, unknown> => ({ ...toProblemBody(spec, config.baseUrl, instance, config.upgradeUrl) });
  const toolError = (doc: Record<string, unknown>): CallToolResult => ({ isError: true, content: [{ type: 'text', text: JSON.stringify(doc) }] });

  const callTool = async (tool: ToolDefinition, args: Record<string, unknown>, who: Principal): Promise<CallToolResult> => {
    const req = toolArgsToRequest(tool, args);
    const instance = req.ok ? req.restPath : tool.operation.path;
    const decision = await config.quota.consume(who.userId, who.tier);
    if (!decision.allowed) config.metrics?.quotaRefused(who.tier);
    if (!decision.allowed) return toolError(problem(RATE_LIMITED, instance));
    if (!req.ok) return toolError(problem({ kind: 'validation', detail: req.errors.length === 1 ? `Invalid ${req.errors[0]!.field}: ${req.errors[0]!.message}.` : 'Invalid input.', errors: req.errors }, instance));
    // A tool call runs synchronously from here: one snapshot answers all of it.
    const ctx: OperationContext = { registry: live.current(), baseUrl: config.baseUrl };
    const result = execute(tool.operation, ctx, who.tier, req.query, req.pathParams);
    if (!result.ok) {
      const spec = result.problem.errors === undefined ? result.problem : { ...result.problem, errors: result.problem.errors.map((e) => ({ field: toolField(tool, e.field), message: e.message })) };
      return toolError(problem(spec, instance));
    }
    const body = result.body;
    return { content: [{ type: 'text', text: tool.summarize(body) }, { type: 'text', text: JSON.stringify(body) }], structuredContent: body };
  };

  const newToolServer = (): Server => {
    const server = new Server({ name: 'health-plan-data', version: config.version ?? '0.0.0' }, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: TOOLS.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema as { type: 'object'; properties?: Record<string, object> },
        outputSchema: t.outputSchema as { type: 'object'; properties?: Record<string, object> },
        annotations: { title: t.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const tool = TOOL_BY_NAME.get(request.params.name);
      if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}`);
      const who = (extra.authInfo?.extra as { principal?: Principal } | undefined)?.principal;
      if (who === undefined) throw new McpError(ErrorCode.InternalError, 'No authenticated principal');
      return callTool(tool, (request.params.arguments ?? {}) as Record<string, unknown>, who);
    });
    return server;
  };

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };
  const problemResponse = (res: ServerResponse, spec: ProblemSpec, instance: string, headers: Record<string, string> = {}): void => {
    const doc = problem(spec, instance);
    const body = JSON.stringify(doc);
    res.writeHead(doc.status as number, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };
  const rpcError = (res: ServerResponse, status: number, code: number, message: string): void => send(res, status, JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));

  const readJson = (req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; status: number; message: string }> =>
    new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) {
          // Stop reading (an endless body must not be consumed) but keep the socket for the 413; the
          // answer closes the connection.
          req.removeAllListeners('data');
          req.pause();
          resolve({ ok: false, status: 413, message: 'Request body too large' });
          return;
        }
        chunks.push(c);
      });
      req.on('end', () => {
        try {
          resolve({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch {
          resolve({ ok: false, status: 400, message: 'Parse error: the body is not JSON' });
        }
      });
      req.on('error', () => resolve({ ok: false, status: 400, message: 'Request body could not be read' }));
    });

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = requestPath(req.url ?? '/');
    if (path === undefined) {
      const errors = [{ field: 'request-target', message: 'is not a valid origin-form or absolute-form target' }];
      return problemResponse(res, { kind: 'validation', detail: 'The request target is not a valid URL.', errors }, '/');
    }
    if (config.health?.answer(req, res, path) === true) return;
    if (prmPaths.has(path)) {
      const cors = { 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=3600' };
      if (method === 'OPTIONS') {
        res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET, HEAD, OPTIONS', 'access-control-allow-headers': '*' });
        res.end();
        return;
      }
      if (method !== 'GET' && method !== 'HEAD') return problemResponse(res, { kind: 'methodNotAllowed', detail: `Method ${method} is not allowed. Allowed: GET, HEAD.` }, path, { allow: 'GET, HEAD' });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(prmBody), ...cors });
      res.end(method === 'HEAD' ? undefined : prmBody);
      return;
    }
    if (path !== mcpPath && path !== '/') return problemResponse(res, { kind: 'notFound', detail: `No route matches ${path}.` }, path);
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin)) return problemResponse(res, { kind: 'forbidden', detail: `Origin ${origin} is not allowed.` }, path);
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') {
      return problemResponse(res, { kind: 'methodNotAllowed', detail: `Method ${method} is not allowed. Allowed: GET, POST, DELETE.` }, path, { allow: 'GET, POST, DELETE' });
    }
    const cred = await config.verifier.verify(req.headers.authorization);
    if (!cred.ok) config.metrics?.authFailed('mcp', cred.reason);
    if (!cred.ok && cred.reason === 'unavailable') return problemResponse(res, { kind: 'unavailable', detail: `${cred.description}. Retry shortly.` }, path, { 'retry-after': '5' });
    if (!cred.ok) {
      const challenge =
        cred.reason === 'missing'
          ? `Bearer resource_metadata="${prmUrl}", scope="${OAUTH_SCOPES.join(' ')}"`
          : `Bearer error="invalid_token", error_description="${cred.description.replaceAll('"', "'")}", resource_metadata="${prmUrl}"`;
      return problemResponse(res, { kind: 'unauthorized', detail: cred.reason === 'missing' ? 'Missing credential: send an API key or an OAuth access token as a Bearer token.' : `${cred.description}.` }, path, { 'www-authenticate': challenge });
    }
    const who = cred.principal;
    const auth: AuthInfo = { token: who.token, clientId: who.clientId, scopes: [...who.scopes], expiresAt: who.expiresAt, resource: new URL(config.mcpUrl), extra: { principal: who } };
    let body: unknown;
    if (method === 'POST') {
      const parsed = await readJson(req);
      if (!parsed.ok) {
        if (parsed.status === 413) res.setHeader('connection', 'close');
        return rpcError(res, parsed.status, -32700, parsed.message);
      }
      body = parsed.value;
      const invalid = findInvalidParams(body);
      if (invalid !== null) {
        // One request: its JSON-RPC error, as the SDK would answer it. A batch: the HTTP request is refused.
        const error = JSON.stringify({ jsonrpc: '2.0', id: invalid.id, error: { code: INVALID_PARAMS, message: invalid.message } });
        return send(res, Array.isArray(body) ? 400 : 200, error);
      }
    }
    const sid = req.headers['mcp-session-id'];
    const request = Object.assign(req, { auth });
    if (typeof sid === 'string' && sid !== '') {
      const live = sessions.touch(sid, who.userId);
      if (live === undefined) return rpcError(res, 404, -32001, 'Session not found: start a new session with initialize');
      await live.transport.handleRequest(request, res, body);
      return;
    }
    if (method !== 'POST' || !isInitializeRequest(body)) return rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    const server = newToolServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.add(id, who.userId, { transport, server }),
      onsessionclosed: (id) => void sessions.drop(id),
    });
    await server.connect(transport);
    await transport.handleRequest(request, res, body);
  };

  const observe = createNodeRequestObserver('mcp', (p) => (p === mcpPath || p === '/' ? '/mcp' : prmPaths.has(p) ? '/.well-known/oauth-protected-resource' : p), config.metrics, config.accessLog);
  const onError = config.onError ?? ((err: unknown) => process.stderr.write(`mcp request failed: ${err instanceof Error ? err.message : String(err)}\n`));
  let listener: NodeListener | null = null;
  return {
    get sessionCount() {
      return sessions.size;
    },
    listen(port, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        const l = createNodeListener(
          'mcp',
          (req, res) => {
            observe?.(req, res);
            onRequest(req, res).catch((err: unknown) => {
              onError(err);
              if (!res.headersSent) problemResponse(res, { kind: 'internal', detail: 'An unexpected error occurred.' }, requestPath(req.url ?? '/') ?? '/');
              else res.end();
            });
          },
          config.listenerLimits,
        );
        listener = l;
        l.server.once('error', (err) => reject(toListenError('mcp', host, port, err)));
        l.server.listen(port, host, () => resolve((l.server.address() as AddressInfo).port));
      });
    },
    async close(graceMs = 0) {
      config.health?.drain();
      // Stop accepting first, so no session starts while the others end.
      const closed = listener?.close(graceMs);
      await sessions.close();
      await closed;
    },
  };
}
