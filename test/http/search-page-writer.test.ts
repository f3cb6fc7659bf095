/**
 * The search page as the REST front writes it (bytes straight from the page model) against the model
 * as objects (what MCP gets): the body must be exactly JSON.stringify of toBody() and the Link header
 * exactly what linkHeader() makes of its links, for every shape of page — offset and cursor pages,
 * the page_size alias, credits, escapes in echoed values, first/middle/last/past-the-end pages. Also the
 * hashes fed piece by piece (ETag, cursor fingerprint) and the generated request ids.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ByteWriter } from '../../src/encoding/byte-writer.ts';
import { linkHeader } from '../../src/http/conditional.ts';
import { requestIdFrom } from '../../src/http/request-id.ts';
import { writeSearchPage } from '../../src/http/search-page-writer.ts';
import { type DataRegistry, openRegistry } from '../../src/operations/data-registry.ts';
import { fastHash, HashStream } from '../../src/encoding/fast-hash.ts';
import { canonicalHash, canonicalRequest, execute, type Executed } from '../../src/operations/operation.ts';
import type { RequestScratch } from '../../src/operations/request-scratch.ts';
import { inScratch } from '../helpers/run-operation.ts';
import { SearchPageModel } from '../../src/operations/search-page.ts';
import { searchPlansOperation } from '../../src/operations/search-plans.ts';
import { InvariantError } from '../../src/invariant.ts';
import { buildFixture } from '../helpers/fixture-build.ts';

const BASE = 'http://api.test';
const SERVICE_DESC = `${BASE}/v1/openapi.json`;
let dir: string;
let registry: DataRegistry;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-page-writer-'));
  registry = openRegistry(await buildFixture(dir), BASE);
});
after(() => {
  registry?.close();
  rmSync(dir, { recursive: true, force: true });
});

function search(query: string, scratch: RequestScratch): Executed {
  const r = execute(searchPlansOperation, { registry, baseUrl: BASE }, 'enterprise', [...new URLSearchParams(query)], {}, scratch);
  assert.ok(r.ok, `${query}: ${JSON.stringify(r.ok ? null : r.problem)}`);
  return r;
}

describe('writeSearchPage', () => {
  const body = new ByteWriter(64);
  const link = new ByteWriter(16);

  /** The page's body, after checking that its bytes and Link header are those of its objects. */
  const check = (query: string): Record<string, unknown> =>
    inScratch((scratch) => {
      const r = search(query, scratch);
      assert.ok(r.model instanceof SearchPageModel, query);
      writeSearchPage(r.model, body, link, SERVICE_DESC);
      const bytes = body.view().toString('utf8');
      const header = link.view().toString('latin1');
      const objects = r.model.toBody();
      assert.equal(bytes, JSON.stringify(objects), query);
      assert.equal(header, linkHeader(objects._links, SERVICE_DESC), query);
      return objects;
    });

  it('writes the bytes of the objects, for every shape of page', () => {
    const queries = [
      'zip=77002&age=40',
      'zip=77002&age=40&page_size=2',
      'zip=77002&age=40&page_size=2&page=2',
      'zip=77002&age=40&per_page=2&page=99',
      'zip=77002&age=40&per_page=100',
      'zip=77002&age=25&metal_level=catastrophic',
      'zip=77002&age=40&income=30000&household_size=2',
      'zip=77002&age=40&income=30000&household_size=2&sort_by=deductible&sort_order=desc&per_page=3',
      'zip=77002&age=40&sort=name&order=desc&per_page=2',
      'zip=77002&age=40&max_premium=300.5&per_page=1',
      'zip=77002&age=40&issuer=a%22b%5Cc%C3%A9%2C&per_page=1',
      'zip=77002&age=40&plan_type=hmo&metal_level=silver',
    ];
    for (const q of queries) check(q);
  });

  it('writes cursor pages, following next_cursor to the end', () => {
    let query = 'zip=77002&age=40&per_page=2&sort_by=name';
    for (let pages = 0; pages < 20; pages++) {
      const body = check(query);
      if (typeof body.next_cursor !== 'string') return;
      query = `zip=77002&age=40&per_page=2&sort_by=name&cursor=${body.next_cursor}`;
    }
    assert.fail('the cursor walk did not end');
  });

  it('grows its buffers past their first size (the writers above start at 64 and 16 bytes)', () => {
    assert.ok(body.buf.length > 64 && link.buf.length > 16);
  });

  it('refuses a page read after its request returned the scratch, even once another search reused it', () => {
    const first = inScratch((scratch) => search('zip=77002&age=40', scratch));
    assert.throws(() => first.model, InvariantError);
    inScratch((scratch) => search('zip=77002&age=50', scratch));
    assert.throws(() => first.model, InvariantError);
    assert.throws(() => first.body, InvariantError);
  });
});

describe('hashes fed piece by piece', () => {
  it('canonicalHash equals fastHash of the canonical text', () => {
    const names = ['age', 'flag', 'ids', 'name', 'price', 'year', 'zip'];
    const values: unknown[] = [undefined, 0, 7, 40, 2025, 300.5, 1e21, -3, true, false, '', 'plain', 'a"b', 'é\\', [40, 38], { a: 1 }];
    for (let i = 0; i < 5_000; i++) {
      const params: Record<string, unknown> = {};
      for (let k = 0; k < names.length; k++) if ((i >> k) & 1) params[names[k]!] = values[(i * 7 + k * 3) % values.length];
      assert.equal(canonicalHash('op', params, names), fastHash(canonicalRequest('op', params, names)), JSON.stringify(params));
    }
    // A key outside the list: the text is made and hashed, sorted as canonicalRequest sorts it.
    assert.equal(canonicalHash('op', { zz: 1, age: 2 }, ['age']), fastHash(canonicalRequest('op', { zz: 1, age: 2 }, ['age'])));
  });

  it('HashStream.number feeds the characters of String(n)', () => {
    for (const n of [0, 1, 9, 10, 99, 100, 12345, 2 ** 53 - 1, 0.5, 300.25, 1e21, -1, Number.NaN]) {
      const h = new HashStream();
      h.number(n);
      assert.equal(h.digest(), fastHash(String(n)), String(n));
    }
  });
});

describe('requestIdFrom', () => {
  it('keeps a safe caller id and makes distinct UUID v4s otherwise, across refills of its random pool', () => {
    assert.equal(requestIdFrom('abc-123'), 'abc-123');
    const seen = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const id = requestIdFrom(i % 2 === 0 ? '' : 'bad id\r\n');
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      seen.add(id);
    }
    assert.equal(seen.size, 1_000);
  });
});
