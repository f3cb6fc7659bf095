/**
 * @module Splitting a raw query string into name/value pairs, as URLSearchParams would.
 *
 * Most requests carry plain ASCII parameters (`zip=77002&age=40`): for those a split on `&` and `=`
 * gives exactly URLSearchParams' pairs without its per-request object and iterator. Anything with an
 * escape (`%`) or a `+` (a space) goes through URLSearchParams, so decoding rules live in one place.
 */

export function queryPairs(raw: string): Array<[string, string]> {
  if (raw.includes('%') || raw.includes('+')) return [...new URLSearchParams(raw)];
  const pairs: Array<[string, string]> = [];
  let start = 0;
  while (start <= raw.length) {
    let end = raw.indexOf('&', start);
    if (end < 0) end = raw.length;
    if (end > start) {
      const eq = raw.indexOf('=', start);
      pairs.push(eq < 0 || eq > end ? [raw.slice(start, end), ''] : [raw.slice(start, eq), raw.slice(eq + 1, end)]);
    }
    start = end + 1;
  }
  return pairs;
}
