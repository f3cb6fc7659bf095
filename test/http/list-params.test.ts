/**
 * List parameters in both spellings: a comma list (`ages=40,38`) and the repeated form generated
 * clients send (`ages=40&ages=38`, OpenAPI form/explode) are the same request: same body, same ETag,
 * same cache entry. A repeated single-valued parameter is still refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../helpers/rest-server.ts';

let s: FixtureServer;
before(async () => {
  s = await startFixtureServer();
});
after(() => s.close());

const APTC = '/v1/health/plans/aptc-estimate?zip=77002&household_income=45000&household_size=3';
const COMPARE = '/v1/health/plans/compare?zip=77002&age=40';

describe('list parameters: comma list or repeated', () => {
  for (const [name, comma, repeated] of [
    ['ages', `${APTC}&ages=35,33,5`, `${APTC}&ages=35&ages=33&ages=5`],
    ['ages (mixed)', `${APTC}&ages=35,33,5`, `${APTC}&ages=35,33&ages=5`],
    ['ids', `${COMPARE}&ids=11111TX0010001-01,11111TX0010002-01`, `${COMPARE}&ids=11111TX0010001-01&ids=11111TX0010002-01`],
  ] as const) {
    test(`${name}: both spellings give the same body, ETag and cache entry`, async () => {
      const a = await s.get(comma);
      const before = s.server.responseCacheStats().entries;
      const b = await s.get(repeated);
      assert.equal(a.status, 200, await a.clone().text());
      assert.equal(b.status, 200, await b.clone().text());
      assert.equal(await b.text(), await a.text());
      assert.equal(b.headers.get('etag'), a.headers.get('etag'));
      assert.equal(s.server.responseCacheStats().entries, before, 'no second cache entry for the other spelling');
      const notModified = await s.get(repeated, { headers: { 'if-none-match': a.headers.get('etag')! } });
      assert.equal(notModified.status, 304);
    });
  }

  test('items of the repeated form are validated at their position, as in a comma list', async () => {
    const res = await s.get(`${APTC}&ages=35&ages=x&ages=5`);
    assert.equal(res.status, 400);
    const body = (await res.json()) as { errors: Array<{ field: string }> };
    assert.deepEqual(
      body.errors.map((e) => e.field),
      ['ages.1'],
    );
  });

  test('a repeated single-valued parameter is still a 400', async () => {
    const res = await s.get(`${APTC}&ages=35&zip=77002`);
    assert.equal(res.status, 400);
    const body = (await res.json()) as { errors: Array<{ field: string; message: string }> };
    assert.deepEqual(body.errors, [{ field: 'zip', message: 'Parameter must not be repeated' }]);
  });
});
