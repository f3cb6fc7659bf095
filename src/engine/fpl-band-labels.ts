/**
 * @module The poverty-level ranges of an APTC estimate in words, one spelling for both tables a
 * preparer checks: the applicable-percentage band (26 U.S.C. §36B(b)(3)(A), on the whole percent of
 * Form 8962 line 5, lower end included) and the cost-sharing-reduction range (45 CFR 155.305(g)(2),
 * upper end included). Both name their ends the same way, "from … to under …" against "over … to …",
 * so that at exactly 150 % the band reads "150% to under 200%" and the CSR range "100% to 150%"
 * and neither contradicts the other.
 */

/**
 * Form 8962 enters 401 for income above 400 %: a band ending at 401 is the statute's "300 percent up to
 * 400 percent", 400 included (data/rules/2026.json).
 */
const FORM_8962_ABOVE_400 = 401;

const LABELS = new Map<number, Map<number | null, string>>();

/** The applicable-percentage band `[from, to)` in words (made once per band). */
export function applicableBandLabel(fromPct: number, toPct: number | null): string {
  let byTo = LABELS.get(fromPct);
  if (byTo === undefined) LABELS.set(fromPct, (byTo = new Map()));
  let label = byTo.get(toPct);
  if (label === undefined) byTo.set(toPct, (label = spell(fromPct, toPct)));
  return label;
}

function spell(fromPct: number, toPct: number | null): string {
  if (toPct === null) return `${fromPct}% and over`;
  if (toPct === FORM_8962_ABOVE_400) return fromPct === 0 ? 'up to 400%' : `${fromPct}% to 400%`;
  return fromPct === 0 ? `under ${toPct}%` : `${fromPct}% to under ${toPct}%`;
}

/** The poverty-level range of each silver CSR level (45 CFR 155.305(g)(2): upper ends included). */
export const CSR_BAND_LABELS = { 94: '100% to 150%', 87: 'over 150% to 200%', 73: 'over 200% to 250%' } as const;
