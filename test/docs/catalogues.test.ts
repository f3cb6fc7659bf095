/**
 * The error catalogues and their documentation agree (the fastify pattern: the code's catalogue is
 * checked against its docs page): every problem type, every build diagnostic code and every one-line
 * CLI error is on docs/errors.md, which the README links, and the page lists nothing the code does not have.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DIAGNOSTIC_CODES } from '../../build/read/diagnostics.ts';
import { PROBLEM_TYPES } from '../../src/operations/problems.ts';
import { ONE_LINE_ERRORS } from '../../src/cli/one-line-errors.ts';

const page = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The identifiers in the first column of the table under a heading of the page. */
function firstColumn(heading: string): string[] {
  const at = page.indexOf(`## ${heading}`);
  assert.ok(at >= 0, `docs/errors.md has no "## ${heading}"`);
  const section = page.slice(at).split('\n## ')[0]!;
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
}

test('the README links the error catalogues page', () => {
  assert.match(readme, /\]\(docs\/errors\.md\)/);
});

test('every problem type is documented with its status, and nothing else is', () => {
  const slugs = Object.values(PROBLEM_TYPES)
    .map((t) => t.slug)
    .sort();
  assert.deepEqual(firstColumn('API problem types').sort(), slugs);
  for (const t of Object.values(PROBLEM_TYPES)) assert.match(page, new RegExp(`\\| \`${t.slug}\` \\| ${t.status} \\|`), t.slug);
});

test('every build diagnostic code is documented, and nothing else is', () => {
  assert.deepEqual(firstColumn('Build diagnostic codes').sort(), Object.values(DIAGNOSTIC_CODES).sort());
});

test('every one-line CLI error is documented with its exit code, and nothing else is', () => {
  assert.deepEqual(firstColumn('Command-line errors').sort(), ONE_LINE_ERRORS.map((e) => e.type.name).sort());
  for (const e of ONE_LINE_ERRORS) assert.match(page, new RegExp(`\\| \`${e.type.name}\` \\| ${e.exit} \\|`), e.type.name);
});
