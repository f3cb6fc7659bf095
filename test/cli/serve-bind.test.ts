/**
 * A port already in use stops `hpd serve` at start with one line naming the listener, the address and
 * the reason, exit 1: before, uWS bound the REST port with SO_REUSEPORT beside another `hpd serve` and
 * the kernel split the traffic between two servers with different state.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { rmSync } from 'node:fs';
import { HPD, prepareServe, spawnServe } from '../helpers/serve-fixture.ts';

function occupy(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

/** Lines of stderr without Node 20's oidc-provider runtime warning. */
function ownLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l !== '' && !l.includes('oidc-provider WARNING'));
}

test('a second hpd serve on the same REST port fails with EADDRINUSE instead of sharing the port', { timeout: 90_000 }, async (t) => {
  const f = await prepareServe('hpd-bind-', { tier: 'pro', userId: 'user-bind' });
  t.after(() => rmSync(f.dir, { recursive: true, force: true }));
  const { child: first } = await spawnServe(f.env);
  t.after(() => {
    if (first.exitCode === null) first.kill('SIGKILL');
  });
  // The second one gets its own MCP and auth ports, so only the REST port is contested.
  const [, mcpPort, authPort] = [0, f.mcpPort + 1000, f.authPort + 1000];
  const second = spawnSync(process.execPath, [HPD, 'serve'], {
    env: { ...f.env, HPD_MCP_PORT: String(mcpPort), HPD_AUTH_PORT: String(authPort) },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(second.status, 1, second.stderr);
  assert.deepEqual(ownLines(second.stderr), [
    `hpd: rest: cannot listen on 127.0.0.1:${f.restPort}: EADDRINUSE (address already in use: another process, or another hpd serve, listens there)`,
  ]);
  const r = await fetch(`http://127.0.0.1:${f.restPort}/v1/health/years`, { headers: { authorization: `Bearer ${f.key}` } });
  assert.equal(r.status, 200, 'the first server still answers every request');
});

test('each listener names itself and the reason when its port is taken by another program', { timeout: 90_000 }, async (t) => {
  const f = await prepareServe('hpd-bind2-', { tier: 'pro', userId: 'user-bind' });
  t.after(() => rmSync(f.dir, { recursive: true, force: true }));
  for (const [name, port] of [
    ['rest', f.restPort],
    ['mcp', f.mcpPort],
    ['auth', f.authPort],
  ] as const) {
    const holder = await occupy(port);
    try {
      const r = spawnSync(process.execPath, [HPD, 'serve'], { env: f.env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 1, `${name}: ${r.stderr}`);
      const lines = ownLines(r.stderr);
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, new RegExp(`^hpd: ${name}: cannot listen on 127\\.0\\.0\\.1:${port}: EADDRINUSE \\(address already in use`));
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  }
});
