/**
 * The records a request reuses are owned by a request scratch (src/operations/request-scratch.ts):
 * no module of src/ makes one at module level, where it would be shared by whatever calls in, with no
 * borrow to say whose it is. A new kind of reused record belongs in this list.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tsFiles } from '../helpers/repo-files.ts';

const REUSED_RECORDS = [
  'Executed',
  'SearchRows',
  'SearchWork',
  'SearchPricing',
  'SearchPageModel',
  'AptcPageModel',
  'AptcEstimateRecord',
  'EstimateWork',
  'HouseholdRater',
  'HouseholdList',
  'RankingRecord',
  'NoteList',
  'PlainReader',
  'RequestScratch',
];

test('no module of src/ makes a reused request record at module level: each belongs to a request scratch', () => {
  const made = new RegExp(`^(?:export )?(?:const|let) \\w+(?:: [^=]+)? = new (${REUSED_RECORDS.join('|')})\\(`, 'gm');
  const found: string[] = [];
  for (const file of tsFiles('src')) {
    for (const m of readFileSync(join(REPO_ROOT, file), 'utf8').matchAll(made)) found.push(`${file}: ${m[0]}`);
  }
  assert.deepEqual(found, []);
});

test('the check sees a record made at module level', () => {
  const made = new RegExp(`^(?:export )?(?:const|let) \\w+(?:: [^=]+)? = new (${REUSED_RECORDS.join('|')})\\(`, 'gm');
  assert.equal([...'const THREAD_ROWS = new SearchRows();\nlet x: SearchRows = new SearchRows(1);\n'.matchAll(made)].length, 2);
});
