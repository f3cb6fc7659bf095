import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InvariantError } from '../../src/invariant.ts';
import { AptcPageModel } from '../../src/operations/aptc-page.ts';
import { openRegistry, type DataRegistry } from '../../src/operations/data-registry.ts';
import { estimateAptcOperation } from '../../src/operations/estimate-aptc.ts';
import { execute, executeToBody, type OperationContext } from '../../src/operations/operation.ts';
import { RequestScratch, scratchPart } from '../../src/operations/request-scratch.ts';
import { searchPlansOperation } from '../../src/operations/search-plans.ts';
import { buildFixture } from '../helpers/fixture-build.ts';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';

let dir: string;
let registry: DataRegistry;
let ctx: OperationContext;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-scratch-'));
  registry = openRegistry(await buildFixture(dir), 'http://api.test');
  ctx = { registry, baseUrl: 'http://api.test' };
});
after(() => {
  registry?.close();
  rmSync(dir, { recursive: true, force: true });
});

const pairs = (query: string): Array<[string, string]> => [...new URLSearchParams(query)];

describe('RequestScratch', () => {
  const PART = scratchPart('test record', () => ({ n: 0 }));

  it('is borrowed and returned in turn; a second borrow before the return throws', () => {
    const s = new RequestScratch();
    s.borrow();
    assert.throws(() => s.borrow(), InvariantError);
    s.release();
    assert.throws(() => s.release(), InvariantError);
    s.borrow();
    s.release();
  });

  it('hands out its parts only while borrowed, the same record each time', () => {
    const s = new RequestScratch();
    assert.throws(() => s.part(PART), InvariantError);
    const first = s.borrow().part(PART);
    s.release();
    const second = s.borrow().part(PART);
    s.release();
    assert.equal(first, second);
    assert.notEqual(new RequestScratch().borrow().part(PART), first, 'each scratch has its own records');
  });

  it('tells a lease in progress from one that ended', () => {
    const s = new RequestScratch().borrow();
    const lease = s.lease;
    s.check(lease, 'a record');
    s.release();
    assert.throws(() => s.check(lease, 'a record'), InvariantError);
    s.borrow();
    assert.throws(() => s.check(lease, 'a record'), /a record was read after the request that made it returned the scratch/);
  });
});

describe('execute with a scratch', () => {
  it('refuses to run outside a borrow', () => {
    assert.throws(() => execute(searchPlansOperation, ctx, 'pro', pairs('zip=77002&age=40'), {}, new RequestScratch()), InvariantError);
  });

  it('refuses a second request in one borrow: the first answer would silently become the second', () => {
    const s = new RequestScratch().borrow();
    const first = execute(searchPlansOperation, ctx, 'pro', 'zip=77002&age=40', {}, s);
    assert.ok(first.ok);
    assert.throws(() => execute(searchPlansOperation, ctx, 'pro', 'zip=77002&age=50', {}, s), /two requests were answered in one borrow/);
    s.release();
  });

  it('an APTC page model read after its request returned the scratch throws, before and after reuse', () => {
    const s = new RequestScratch();
    const query = `zip=${FIXTURE_ZIPS.harris}&household_income=30000&household_size=1&ages=40`;
    s.borrow();
    const r = execute(estimateAptcOperation, ctx, 'enterprise', query, {}, s);
    s.release();
    assert.ok(r.ok);
    assert.throws(() => r.model, InvariantError);
    assert.throws(() => r.body, InvariantError);
    s.borrow();
    const again = execute(estimateAptcOperation, ctx, 'enterprise', query, {}, s);
    assert.ok(again.ok && again.model instanceof AptcPageModel);
    s.release();
    assert.throws(() => again.model!.toBody(), InvariantError);
  });

  it('a body made in a borrow is the caller’s: the next requests on the scratch leave it as it was', () => {
    const s = new RequestScratch();
    const h = FIXTURE_ZIPS.harris;
    const run = (query: string): Record<string, unknown> => {
      const r = executeToBody(estimateAptcOperation, ctx, 'enterprise', query, {}, s);
      assert.ok(r.ok, JSON.stringify(!r.ok && r.problem));
      return r.body;
    };
    // Above 400 % FPL the estimate carries a note; at 200 % it carries none: the notes differ.
    const rich = run(`zip=${h}&household_income=900000&household_size=1&ages=64`);
    const copy = JSON.stringify(rich);
    run(`zip=${h}&household_income=30000&household_size=1&ages=40`);
    run(`zip=${h}&household_income=5000&household_size=2&ages=30,2`);
    assert.ok((rich.notes as string[]).length > 0);
    assert.equal(JSON.stringify(rich), copy);
    const search = executeToBody(searchPlansOperation, ctx, 'pro', 'zip=77002&ages=40,38&per_page=3', {}, s);
    assert.ok(search.ok);
    const searchCopy = JSON.stringify(search.body);
    executeToBody(searchPlansOperation, ctx, 'pro', 'zip=77002&ages=20,2&per_page=1&sort_by=name', {}, s);
    assert.equal(JSON.stringify(search.body), searchCopy);
  });
});
