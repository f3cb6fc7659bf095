/**
 * @module The MCP tools' input schemas are public (docs/compatibility.md#mcp-tools): a model or client caches them.
 * The fixture is the schemas as `tools/list` published them when they were hand-written; whatever
 * produces them now must give the same JSON text, keyword order included, so a change to them is a
 * deliberate edit of the fixture, visible in review.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { TOOLS } from '../../src/mcp/tools.ts';

const FIXTURE = new URL('../fixtures/mcp-tool-input-schemas.json', import.meta.url);

test('every tool publishes the input schema of the fixture, byte for byte', () => {
  const expected = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>;
  assert.deepEqual(
    TOOLS.map((t) => t.name),
    Object.keys(expected),
    'the same tools, in the same order',
  );
  for (const tool of TOOLS) {
    assert.deepEqual(tool.inputSchema, expected[tool.name], tool.name);
    assert.equal(JSON.stringify(tool.inputSchema), JSON.stringify(expected[tool.name]), `${tool.name}: same keyword order`);
  }
});
