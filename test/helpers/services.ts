/**
 * @module The whole service as operators run it (`startServices`: REST, MCP and the embedded
 * authorization server in one process, one state store, one daily quota) over the fixture dataset, on
 * free ports found beforehand, because the issuer and the MCP resource identifier name their ports.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../bench/lib/processes.ts';
import { startServices, type Services } from '../../src/cli/services.ts';
import type { ListenerLimits } from '../../src/http/node-listener.ts';
import { DEFAULT_DAILY_LIMITS, type Tier } from '../../src/policy/tiers.ts';
import { buildFixture } from './rest-server.ts';

/** Free loopback ports: the benchmark harness's helper (listening on port 0, all at once). */
export { freePorts };

export interface TestServices {
  readonly services: Services;
  /** REST origin, e.g. http://127.0.0.1:PORT. */
  readonly restUrl: string;
  /** The MCP endpoint and resource identifier, http://127.0.0.1:PORT/mcp. */
  readonly mcpUrl: string;
  /** The embedded authorization server's issuer, http://127.0.0.1:PORT. */
  readonly authUrl: string;
  /** Temporary directory holding the fixture build and the state; removed by close(). */
  readonly dir: string;
  /** Where the fixture build is published (tests publish more builds there). */
  readonly buildsRoot: string;
  close(): Promise<void>;
}

/** Builds the fixture dataset (year 2025) and starts all three fronts on free ports. */
export async function startTestServices(
  opts: {
    limits?: Partial<Record<Tier, number>>;
    listenerLimits?: Partial<ListenerLimits>;
    drainMs?: number;
    workers?: number;
    restMaxConnections?: number;
    restMaxConnectionsPerAddress?: number;
    metricsPort?: number;
  } = {},
): Promise<TestServices> {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-services-'));
  try {
    const buildsRoot = await buildFixture(dir);
    const [restPort, mcpPort, authPort] = (await freePorts(3)) as [number, number, number];
    const mcpUrl = `http://127.0.0.1:${mcpPort}/mcp`;
    const authUrl = `http://127.0.0.1:${authPort}`;
    const services = await startServices({
      buildsRoot,
      stateDir: join(dir, 'state'),
      host: '127.0.0.1',
      restPort,
      baseUrl: 'http://api.test',
      upgradeUrl: 'https://hpd.test/pricing',
      mcpPort,
      mcpUrl,
      authPort,
      authUrl,
      limits: { ...DEFAULT_DAILY_LIMITS, ...opts.limits },
      listenerLimits: opts.listenerLimits,
      drainMs: opts.drainMs,
      workers: opts.workers,
      restMaxConnections: opts.restMaxConnections,
      restMaxConnectionsPerAddress: opts.restMaxConnectionsPerAddress,
      metricsPort: opts.metricsPort,
    });
    return {
      services,
      buildsRoot,
      restUrl: `http://127.0.0.1:${services.restPort}`,
      mcpUrl,
      authUrl,
      dir,
      async close() {
        try {
          await services.close();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The decoded JSON of a JWT part (0 = header, 1 = payload), without verification. */
export function decodeJwtPart(token: string, part: 0 | 1): Record<string, unknown> {
  const segment = token.split('.')[part];
  if (segment === undefined) throw new Error('not a JWT');
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
}
