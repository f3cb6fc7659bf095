/**
 * @module "did you mean …?" for a mistyped name — a CLI option or command, an API query parameter: the
 * known name at the smallest edit distance (insertions, deletions, substitutions and swaps of
 * neighbours, the usual typing slips), if it is close enough that the suggestion is likely right rather
 * than noise; else the one known name of which the given one is a whole word (`metal` → `metal_level`).
 */

/** Optimal string alignment distance (Damerau–Levenshtein without repeated edits of a substring). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest of `known` to `given`, or undefined when none is within a third of its length (at least 1, at most 3 edits). */
export function closest(given: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const dist = editDistance(given.toLowerCase(), k.toLowerCase());
    if (dist < bestDistance) {
      best = k;
      bestDistance = dist;
    }
  }
  const allowed = Math.min(3, Math.max(1, Math.floor((best?.length ?? 0) / 3)));
  if (bestDistance <= allowed) return best;
  const word = given.toLowerCase();
  const containing = known.filter((k) => k.toLowerCase().split(/[_-]/).includes(word));
  return containing.length === 1 ? containing[0] : undefined;
}

/** " (did you mean X?)" or, without a close name, the list of valid ones. */
export function suggestion(given: string, known: readonly string[]): string {
  const near = closest(given, known);
  return near !== undefined ? ` (did you mean ${near}?)` : known.length > 0 ? ` (valid: ${known.join(', ')})` : '';
}
