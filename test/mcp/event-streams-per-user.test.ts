/**
 * Event streams a user can hold open on the MCP listener: one standalone stream per session and at most
 * 20 sessions per user, so a client that opens sessions and streams without end holds 20 streams, and a
 * session evicted to make room takes its stream with it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startMcpFixture, type McpFixture } from '../helpers/mcp-server.ts';

const PER_USER = 20;
const VERSION = '2025-11-25';

let fx: McpFixture;
before(async () => {
  fx = await startMcpFixture();
});
after(() => fx?.close());

const headers = (): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${fx.rest.keys.pro}`,
  'mcp-protocol-version': VERSION,
});

async function newSession(): Promise<string> {
  const r = await fetch(fx.mcpUrl, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'streams', version: '1' } },
    }),
  });
  await r.text();
  const id = r.headers.get('mcp-session-id');
  assert.ok(r.status === 200 && id !== null, `initialize answered ${r.status}`);
  return id;
}

/** A standalone event stream (GET) on a session, kept open: its status and whether it is still open. */
function openStream(session: string): Promise<{ status: number; open(): boolean; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(fx.mcpUrl, { method: 'GET', headers: { ...headers(), 'mcp-session-id': session } }, (res) => {
      let open = true;
      res.on('data', () => {});
      res.once('close', () => (open = false));
      resolve({ status: res.statusCode ?? 0, open: () => open, close: () => req.destroy() });
    });
    req.once('error', reject);
    req.end();
  });
}

test('one user holds at most 20 event streams; a second stream on a session is refused; an evicted session closes its stream', {
  timeout: 60_000,
}, async () => {
  const sessions = await Promise.all(Array.from({ length: PER_USER }, newSession));
  const streams = await Promise.all(sessions.map(openStream));
  try {
    assert.deepEqual(
      streams.map((s) => s.status),
      sessions.map(() => 200),
    );
    const second = await openStream(sessions.at(-1)!);
    second.close();
    assert.equal(second.status, 409, 'one standalone stream per session');

    const extra = 5;
    for (let i = 0; i < extra; i++) await newSession();
    const deadline = Date.now() + 5000;
    while (streams.filter((s) => s.open()).length > PER_USER - extra && Date.now() < deadline) await sleep(50);
    assert.deepEqual(
      streams.map((s) => s.open()),
      streams.map((_, i) => i >= extra),
      'the oldest sessions were evicted with their streams; the others stay open',
    );
    const evicted = await openStream(sessions[0]!);
    evicted.close();
    assert.equal(evicted.status, 404, 'an evicted session is gone');
  } finally {
    for (const s of streams) s.close();
  }
});
