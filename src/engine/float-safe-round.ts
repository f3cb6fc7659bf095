/**
 * @module Rounding that first absorbs float representation error, as `Number(x.toPrecision(12))` does
 * (2106.0000000000005 → 2106, 175.49999999999997 → 175.5, 847.4999… → 847.5), without making that
 * string on the common path.
 *
 * Rounding `x` to 12 significant digits moves it by at most 5e-12 × |x|. Math.round changes its answer
 * only at half-integers and Math.floor only at integers, so when `x` is farther than that from the
 * nearest such edge (with a 20× margin for the float error of the distance itself), the 12-digit value
 * rounds exactly as `x` does, and `x` is rounded directly. Only values within ~1e-10 × |x| of an edge
 * take the string: the same answers as before for every input (test/engine/float-safe-round.test.ts).
 */

/** The margin around an edge inside which the 12-digit text decides. */
function margin(x: number): number {
  return 1e-10 * Math.abs(x) + 1e-12;
}

/** `Math.round(Number(x.toPrecision(12)))`: half up, after absorbing representation error. */
export function roundHalfUp(x: number): number {
  const f = x - Math.floor(x);
  if (Math.abs(f - 0.5) > margin(x)) return Math.round(x);
  return Math.round(Number(x.toPrecision(12)));
}

/** `Math.floor(Number(x.toPrecision(12)))`: the whole part, after absorbing representation error. */
export function floorSafe(x: number): number {
  const f = x - Math.floor(x);
  const m = margin(x);
  if (f > m && 1 - f > m) return Math.floor(x);
  return Math.floor(Number(x.toPrecision(12)));
}
