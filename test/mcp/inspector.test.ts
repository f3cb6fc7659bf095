/**
 * The MCP Inspector's CLI (@modelcontextprotocol/inspector 2.x, run as its own process, as a developer
 * would) against our MCP endpoint: `tools/list --strict` reports every tool-schema portability problem
 * it knows (multi-type `type` arrays that single-type dialects such as Gemini's reject, …) and must find
 * none; a `tools/call` through it returns the structured result our own clients get.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TOOLS } from '../../src/mcp/tools.ts';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';
import { type McpFixture, startMcpFixture } from '../helpers/mcp-server.ts';

const inspector = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url),
);

let fx: McpFixture;
before(async () => {
  fx = await startMcpFixture();
});
after(async () => {
  await fx?.close();
});

function inspect(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [inspector, '--cli', fx.mcpUrl, '--header', `Authorization: Bearer ${fx.rest.keys.pro}`, ...args],
      { env: { ...process.env, NO_COLOR: '1', MCP_CATALOG_PATH: '/dev/null' }, timeout: 60_000 },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('Inspector tools/list --strict: every tool, no portability warning or error', async () => {
  const r = await inspect('--method', 'tools/list', '--strict');
  const problems = r.stderr.split('\n').filter((l) => /^(Warning|Error):/.test(l));
  assert.deepEqual(problems, [], r.stderr);
  assert.equal(r.code, 0, r.stderr);
  const listed = (JSON.parse(r.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name).sort();
  assert.deepEqual(listed, TOOLS.map((t) => t.name).sort());
});

test('Inspector tools/call returns the structured result', async () => {
  const r = await inspect('--method', 'tools/call', '--tool-name', 'lookup_zip', '--tool-arg', `zip=${FIXTURE_ZIPS.harris}`);
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(r.stdout) as { isError?: boolean; structuredContent?: { zip?: string; locations?: unknown[] } };
  assert.notEqual(result.isError, true, r.stdout);
  assert.equal(result.structuredContent?.zip, FIXTURE_ZIPS.harris);
  assert.ok((result.structuredContent?.locations?.length ?? 0) > 0, r.stdout);
});
