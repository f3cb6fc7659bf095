/**
 * @module The accepted path of REST query strings (src/operations/plain-query.ts) against the general
 * one (query.ts parseQuery over the pairs): over a generated corpus of requests for every operation —
 * valid ones, aliases, repetitions, unknown names, escapes, empty values, numbers at and past their
 * bounds, bad list items, path parameters — whatever the reader accepts, the general path accepts with
 * the same parameters, names sent, aliases and echoed values; and it does accept the plain valid ones,
 * so the fast path cannot quietly stop being taken.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OPERATIONS } from '../../src/operations/index.ts';
import type { Operation } from '../../src/operations/operation.ts';
import { parseQuery, type JsonSchema } from '../../src/operations/query.ts';
import { queryPairs } from '../../src/encoding/query-string.ts';

/** A small deterministic generator (mulberry32), so a failure names a reproducible case. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PLAN_IDS = ['11111TX0010001', '11111TX0010001-01', 'XYZ', '99999ZZ9999999'];

/** Values a parameter is given: plainly valid ones first (`valid`), then everything else. */
function valuesOf(name: string, schema: JsonSchema): { valid: string[]; other: string[] } {
  const other = ['', 'abc', '%20', '+', '-1', '1e3', '9'.repeat(400), 'null', 'true', ' 7', '7 ', '0x10', '.', '1.', '.5', '007'];
  const t = schema.type;
  const lo = typeof schema.minimum === 'number' ? schema.minimum : 0;
  const hi = typeof schema.maximum === 'number' ? schema.maximum : 1_000_000;
  if (t === 'integer')
    return {
      valid: [String(lo), String(hi), String(Math.floor((lo + hi) / 2)), `00${lo + 1}`],
      other: [...other, String(lo - 1), String(hi + 1), `${lo}.5`, `${hi}.0`],
    };
  if (t === 'number')
    return {
      valid: [String(lo), String(hi), '40000.5', '12.25', '.5', '1.'],
      other: [...other, String(hi + 1), `${hi}.000001`, '1.2.3', '0.1234567890123456789012345'],
    };
  if (t === 'boolean') return { valid: ['true', 'false'], other: [...other, 'TRUE', '1', 'yes'] };
  if (t === 'array') {
    const item = schema.items as JsonSchema;
    if (item.type === 'integer')
      return {
        valid: ['40', '40,38,10', '65,0', '30,30,30,30,5,3,1'],
        other: [
          ...other,
          '40,',
          ',40',
          '40,,3',
          '40,x',
          '66',
          '40,-1',
          '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21',
          '40%2C38',
          '40, 38',
        ],
      };
    return {
      valid: ['11111TX0010001,11111TX0010002', 'A,B,C', 'A%2CB'],
      other: [...other, 'A', 'A,', 'A%2C', '%2CA', 'A%2C%2CB', 'A%2DB,C', 'A,B,C,D,E', '40, 38', '40%20,38'],
    };
  }
  if (Array.isArray(schema.enum)) {
    const e = schema.enum as string[];
    return {
      valid: e.filter((v) => /^[a-z_]+$/.test(v)),
      other: [...other, `${e[0]}x`, e[0]!.toUpperCase(), 'expanded%20bronze', 'expanded+bronze'],
    };
  }
  if (name === 'zip' || name === 'county_fips') return { valid: ['77002', '48201', '00501'], other: [...other, '7700', '770021', '7700a'] };
  if (name === 'state') return { valid: ['TX', 'CT'], other: [...other, 'tx', 'T', 'TXX'] };
  if (name === 'plan_id') return { valid: PLAN_IDS.slice(0, 1), other: [...other, ...PLAN_IDS.slice(1)] };
  return { valid: ['a', 'Blue', 'x'.repeat(100), 'eyJ2IjoxfQ'], other: [...other, 'x'.repeat(101), 'a%22b', 'caf%C3%A9', 'x'.repeat(513)] };
}

interface Case {
  readonly raw: string;
  readonly path: Record<string, string>;
  /** Built from valid values only, no name twice, every required name: the reader must take it. */
  readonly plain: boolean;
}

function cases(op: Operation<never>, count: number, seed: number): Case[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const props = op.query.spec.schema.properties as Record<string, JsonSchema>;
  const required = new Set((op.query.spec.schema.required ?? []) as string[]);
  const aliases = Object.entries(op.query.spec.aliases ?? {});
  const queryNames = Object.keys(props).filter((n) => !op.pathParams.includes(n));
  const [alt] = op.query.spec.alternatives ?? [];
  const exclusive = op.query.spec.exclusive ?? [];
  const partnerUsed = (n: string, used: ReadonlySet<string>): boolean =>
    exclusive.some(([a, b]) => (a === n && used.has(b)) || (b === n && used.has(a)));
  const out: Case[] = [];
  for (let c = 0; c < count; c++) {
    const path: Record<string, string> = {};
    let plain = rnd() < 0.5;
    for (const p of op.pathParams) {
      const v = valuesOf(p, props[p] ?? {});
      const valid = plain || rnd() < 0.6;
      path[p] = valid ? pick(v.valid) : pick(v.other.filter((x) => !x.includes('%') && !x.includes('+')));
    }
    const parts: string[] = [];
    const used = new Set<string>();
    const add = (name: string, value: string): void => {
      parts.push(`${name}=${value}`);
      used.add(name);
    };
    if (plain) {
      // Required names (one of an alternative pair), then a few optional ones, each once.
      for (const n of queryNames) if (required.has(n)) add(n, pick(valuesOf(n, props[n]!).valid));
      if (alt !== undefined) add(alt[rnd() < 0.5 ? 0 : 1], pick(valuesOf(alt[0], props[alt[0]]!).valid));
      for (const n of queryNames) {
        if (used.has(n) || required.has(n) || alt?.includes(n) || partnerUsed(n, used) || rnd() < 0.6) continue;
        const alias = aliases.find(([, to]) => to === n);
        add(alias !== undefined && rnd() < 0.5 ? alias[0] : n, pick(valuesOf(n, props[n]!).valid));
      }
      // The reader takes one spelling of a name: an alias next to its name goes the general way.
      plain = !aliases.some(([a, to]) => used.has(a) && used.has(to));
    } else {
      const names = [...queryNames, ...aliases.map(([a]) => a), ...op.pathParams, 'unknown', 'api_key', 'Zip'];
      const n = 1 + Math.floor(rnd() * 6);
      for (let i = 0; i < n; i++) {
        const name = pick(names);
        const schema = props[op.query.spec.aliases?.[name] ?? name] ?? { type: 'string' };
        const v = valuesOf(name, schema);
        add(rnd() < 0.05 ? `${name}%5B%5D` : name, rnd() < 0.5 ? pick(v.valid) : pick(v.other));
      }
      if (rnd() < 0.1) parts.push(pick(['', 'flag', '=x', 'zip']));
    }
    out.push({ raw: parts.join('&'), path, plain });
  }
  return out;
}

/** The parameters without the reader's absent (undefined) members. */
function defined(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
}

describe('plain query strings', () => {
  for (const o of OPERATIONS) {
    const op = o as unknown as Operation<never>;
    it(`${op.id}: the reader accepts what parseQuery accepts, with the same parameters`, () => {
      const part = op.query.plain;
      assert.ok(part !== null, `${op.id}: every query schema of ours compiles to a reader`);
      const reader = part.make();
      const names = [...op.query.order, ...Object.keys(op.query.spec.aliases ?? {})];
      let taken = 0;
      let plainCases = 0;
      for (const c of cases(op, 3000, op.id.length * 7919)) {
        const slow = parseQuery(op.query, queryPairs(c.raw), c.path);
        const fast = reader.read(c.raw, c.path);
        const what = `${op.id} ?${c.raw} ${JSON.stringify(c.path)}`;
        if (c.plain) {
          plainCases++;
          assert.ok(slow.ok, `${what}: a plain case must be valid (${slow.ok ? '' : JSON.stringify(slow.errors)})`);
          assert.ok(fast !== null, `${what}: the reader must take a plain valid request`);
        }
        if (fast === null) continue;
        taken++;
        assert.ok(slow.ok, `${what}: the reader accepted what parseQuery refuses: ${slow.ok ? '' : JSON.stringify(slow.errors)}`);
        assert.deepEqual(defined(fast.params), slow.params, what);
        assert.deepEqual(fast.meta.given, slow.given, what);
        for (const n of names) {
          assert.equal(fast.meta.raw.get(n), slow.raw.get(n), `${what}: echoed ${n}`);
          assert.equal(fast.meta.aliasUsed.has(n), slow.aliasUsed.has(n), `${what}: alias ${n}`);
        }
      }
      assert.ok(plainCases > 1000 && taken >= plainCases, `${op.id}: ${taken} read plainly of ${plainCases} plain cases`);
    });
  }

  it('reads in place: a read rewrites the previous answer (valid until the next call)', () => {
    const search = OPERATIONS.find((o) => o.id === 'searchPlans')!;
    const reader = search.query.plain!.make();
    const first = reader.read('zip=77002&age=40&page_size=10', {});
    assert.ok(first !== null);
    assert.equal(first.params.age, 40);
    assert.equal(first.meta.aliasUsed.has('page_size'), true);
    const second = reader.read('zip=77002&ages=40,38', {});
    assert.ok(second !== null);
    assert.equal(first.params.age, undefined);
    assert.deepEqual(first.params.ages, [40, 38]);
    assert.equal(first.meta.aliasUsed.has('page_size'), false);
    assert.equal(first.meta.raw.get('ages'), '40,38');
  });

  it('declines a schema keyword it does not check, so the request takes the general path', async () => {
    const { PlainReader } = await import('../../src/operations/plain-query.ts');
    assert.equal(PlainReader.compile({ schema: { type: 'object', properties: { q: { type: 'string', format: 'email' } } } }), null);
    assert.equal(PlainReader.compile({ schema: { type: 'object', properties: { q: { type: 'integer', multipleOf: 5 } } } }), null);
    assert.equal(PlainReader.compile({ schema: { type: 'object', properties: {}, minProperties: 1 } }), null);
    assert.ok(PlainReader.compile({ schema: { type: 'object', properties: { q: { type: 'integer', minimum: 1 } } } }) !== null);
  });
});
