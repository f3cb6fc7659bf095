/**
 * Problem texts have one home each (docs/architecture.md, "One declaration per rule"): a problem both
 * fronts give is declared in src/operations/problems.ts, a problem one front alone gives in that front's
 * problem module. No other file of a front writes a problem: neither a `detail` literal nor a problem
 * object of its own (`kind: 'notFound'`…), which is how the REST and MCP wordings of one problem drift apart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROBLEM_TYPES } from '../../src/operations/problems.ts';
import { tsFiles } from '../helpers/repo-files.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The fronts: every .ts file under these folders is scanned. */
const FRONTS = ['src/http', 'src/mcp', 'src/auth-server'];
/** The fronts' own problem modules, where their problems are declared. */
const PROBLEM_MODULES = ['src/http/front-problems.ts', 'src/mcp/front-problems.ts'];

/** A `detail` written as a literal (quoted or template, on its line or the next), or a problem kind set in place. */
const PROBLEM_LITERAL = new RegExp(`\\bdetail:\\s*['"\`]|\\bkind:\\s*['"](?:${Object.keys(PROBLEM_TYPES).join('|')})['"]`, 'g');

/** `file:line: text` of each problem literal in `file`. */
function problemLiterals(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(PROBLEM_LITERAL)].map((m) => {
    const line = text.slice(0, m.index).split('\n').length;
    return `${file}:${line}: ${text.split('\n')[line - 1]!.trim()}`;
  });
}

test('no file of a front writes a problem text or a problem of its own outside the problem modules', () => {
  const files = FRONTS.flatMap(tsFiles).filter((f) => !PROBLEM_MODULES.includes(f));
  assert.ok(files.length > 30, `the fronts were found (${files.length} files)`);
  assert.deepEqual(files.flatMap(problemLiterals), [], 'declare the problem in src/operations/problems.ts or the front’s problem module');
});

test('the scan finds the problems declared in each problem module and in the catalogue (it can fail)', () => {
  for (const file of [...PROBLEM_MODULES, 'src/operations/problems.ts'])
    assert.ok(problemLiterals(file).length >= 2, `${file}: its declarations are what the scan looks for`);
});
