/**
 * @module The float-safe rounding's fast path (src/engine/float-safe-round.ts) against the text it
 * replaces, `toPrecision(12)`, on values where the two could part: near every half-integer and integer
 * edge, representation-error cases of the APTC arithmetic, and a broad random sweep.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { floorSafe, roundHalfUp } from '../../src/engine/float-safe-round.ts';

const viaText = (x: number): number => Math.round(Number(x.toPrecision(12)));
const floorViaText = (x: number): number => Math.floor(Number(x.toPrecision(12)));

function check(x: number): void {
  assert.equal(roundHalfUp(x), viaText(x), `roundHalfUp(${x})`);
  assert.equal(floorSafe(x), floorViaText(x), `floorSafe(${x})`);
}

test('equals Math.round/floor of the 12-digit text near every edge', () => {
  const steps = [0, 1e-15, 1e-13, 1e-12, 1e-11, 5e-11, 1e-10, 1e-9, 1e-7, 1e-4];
  for (let k = -50; k <= 2_000_000; k += k < 1000 ? 1 : 997) {
    for (const edge of [k, k + 0.5]) {
      for (const s of steps) {
        check(edge + s);
        check(edge - s);
        // Relative offsets, as products of money amounts and percentages produce them.
        check(edge * (1 + s));
        check(edge * (1 - s));
      }
    }
  }
});

test('the cases representation error produces in the APTC arithmetic', () => {
  for (const x of [
    2106.0000000000005,
    175.49999999999997,
    847.4999999999999,
    8.475 * 100,
    0.1 + 0.2,
    1.005 * 100,
    (40000 * 8.59) / 100,
    3436 / 12,
  ])
    check(x);
  for (let income = 0; income <= 200_000; income += 37.5) {
    for (const pct of [2.1, 3.14, 4.19, 6.6, 8.5, 8.59, 9.02, 9.96]) {
      const yearly = (income * pct) / 100;
      check(yearly);
      check(roundHalfUp(yearly) / 12);
      check((income * 100) / 15650);
    }
  }
});

test('a random sweep over magnitudes', () => {
  let seed = 7;
  const rnd = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  for (let i = 0; i < 200_000; i++) {
    const scale = 10 ** Math.floor(rnd() * 14 - 2);
    const x = (rnd() - 0.1) * scale;
    check(x);
    check(Math.round(x * 2) / 2 + (rnd() - 0.5) * 1e-9);
  }
});
