/**
 * @module A real MCP server on port 0 over the fixture REST harness (same registry, store and quota),
 * with an injectable clock and, optionally, a local key set standing in for the authorization server.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JWTVerifyGetKey } from 'jose';
import { createCredentialVerifier } from '../../src/mcp/credentials.ts';
import { createMcpServer, type McpHttpServer } from '../../src/mcp/server.ts';
import { startFixtureServer, type FixtureServer } from './rest-server.ts';

export const TEST_ISSUER = 'http://auth.test';

export interface McpFixture {
  readonly rest: FixtureServer;
  readonly mcp: McpHttpServer;
  /** The MCP endpoint (resource identifier), e.g. http://127.0.0.1:PORT/mcp. */
  readonly mcpUrl: string;
  /** Moves the MCP server's clock (sessions, token expiry) by this many milliseconds. */
  advance(ms: number): void;
  /** The MCP server's clock, milliseconds since the epoch. */
  now(): number;
  connect(bearer: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }>;
  close(): Promise<void>;
}

export async function startMcpFixture(
  opts: {
    keys?: JWTVerifyGetKey;
    issuer?: string;
    idleMs?: number;
    buildsRoot?: string;
    limits?: Partial<Record<'free' | 'pro' | 'enterprise', number>>;
  } = {},
): Promise<McpFixture> {
  const rest = await startFixtureServer({ buildsRoot: opts.buildsRoot, limits: opts.limits });
  let offset = 0;
  const clock = (): number => rest.now + offset;
  // The resource identifier names the port, known only after listening: reserve a free port with a
  // probe server, then start the real one on it.
  const holder = { url: '' };
  let mcp: McpHttpServer | null = null;
  const build = (url: string): McpHttpServer =>
    createMcpServer({
      registry: rest.registry,
      quota: rest.quota,
      verifier: createCredentialVerifier({
        issuer: opts.issuer ?? TEST_ISSUER,
        resource: url,
        store: rest.store,
        clock,
        ...(opts.keys !== undefined ? { keys: opts.keys } : {}),
      }),
      mcpUrl: url,
      authServerUrl: opts.issuer ?? TEST_ISSUER,
      baseUrl: 'http://api.test',
      upgradeUrl: 'https://hpd.test/pricing',
      idleMs: opts.idleMs,
      clock,
    });
  const probe = build('http://127.0.0.1:0/mcp');
  const port = await probe.listen(0);
  await probe.close();
  holder.url = `http://127.0.0.1:${port}/mcp`;
  mcp = build(holder.url);
  await mcp.listen(port);
  const server = mcp;
  return {
    rest,
    mcp: server,
    mcpUrl: holder.url,
    advance(ms) {
      offset += ms;
    },
    now: clock,
    async connect(bearer) {
      const client = new Client({ name: 'hpd-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(holder.url), {
        requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
      });
      await client.connect(transport);
      return { client, transport };
    },
    async close() {
      await server.close();
      await rest.close();
    },
  };
}
