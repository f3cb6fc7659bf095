/**
 * @module Text rendering of a {@link BuildDiff} for `hpd builds diff`: a summary an operator reads in a
 * terminal before switching builds. Long lists are cut to the `top` largest entries; `--json` has all.
 */
import type { BuildDiff, PlanGroupDiff, SlcspChange } from '../engine/build-diff.ts';

const short = (hash: string): string => hash.slice(0, 12);
const pct = (x: number | null): string => (x === null ? '—' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)}%`);
const money = (x: number | null): string => (x === null ? 'none' : `$${x.toFixed(2)}`);
const signed = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;
const counts = (g: PlanGroupDiff): string => `${g.before} -> ${g.after}: +${g.added} -${g.removed} ~${g.changed}`;

function more(lines: string[], total: number, shown: number): void {
  if (total > shown) lines.push(`  … and ${total - shown} more (--json lists all)`);
}

/** The diff as lines of text (no trailing newline). `top` bounds every list. */
export function renderBuildDiff(d: BuildDiff, top = 10): string {
  const out: string[] = [];
  out.push(`diff ${d.a.year}/${short(d.a.hash)} (built ${d.a.built_at}) -> ${d.b.year}/${short(d.b.hash)} (built ${d.b.built_at})`);
  if (d.cross_year)
    out.push(`note: builds of two plan years: plans are matched by plan id, although issuers may renumber plans between years`);
  if (d.a.data_source !== d.b.data_source) out.push(`note: data source ${d.a.data_source} -> ${d.b.data_source}`);

  const t = d.plans.total;
  const fields = Object.entries(d.plans.changed_fields)
    .sort(([, x], [, y]) => (y ?? 0) - (x ?? 0))
    .map(([f, n]) => `${f} ${n}`)
    .join(', ');
  out.push('');
  out.push(
    `plans (standard component ids): ${t.before} -> ${t.after}: ${t.added} added, ${t.removed} removed, ${t.changed} changed${fields === '' ? '' : ` (${fields})`}, ${t.unchanged} unchanged; variants ${t.variants_before} -> ${t.variants_after}`,
  );
  const states = d.plans.by_state.filter((s) => s.added + s.removed + s.changed > 0 || s.variants_before !== s.variants_after);
  if (states.length > 0) {
    out.push('  per state (before -> after: +added -removed ~changed):');
    for (const s of states) out.push(`    ${s.state}  ${counts(s)}  variants ${s.variants_before} -> ${s.variants_after}`);
  }
  const issuers = d.plans.by_issuer.filter((s) => s.added + s.removed + s.changed > 0);
  if (issuers.length > 0) {
    out.push('  per issuer:');
    for (const s of issuers.slice(0, top * 3)) out.push(`    ${s.state} ${s.issuer_id} ${s.issuer}  ${counts(s)}`);
    more(out, issuers.length, Math.min(issuers.length, top * 3));
  }
  const list = (label: string, ids: readonly string[]): void => {
    if (ids.length === 0) return;
    out.push(`  ${label}: ${ids.slice(0, top).join(' ')}${ids.length > top ? ` … (+${ids.length - top})` : ''}`);
  };
  list('added', d.plans.added);
  list('removed', d.plans.removed);
  if (d.plans.changed.length > 0) {
    out.push('  changed:');
    for (const c of d.plans.changed.slice(0, top)) out.push(`    ${c.id} ${c.state} ${c.issuer}: ${c.fields.join(', ')}`);
    more(out, d.plans.changed.length, Math.min(top, d.plans.changed.length));
  }

  out.push('');
  out.push('premium change at age 40, per (plan, rating area) priced in both builds (after / before - 1):');
  const dist = d.premiums.distributions.filter((x) => x.age === 40);
  if (dist.length === 0) out.push('  no plan is priced in both builds');
  else {
    out.push(
      `  ${'metal'.padEnd(16)}${'pairs'.padStart(8)}${'up'.padStart(8)}${'down'.padStart(8)}${'p10'.padStart(10)}${'median'.padStart(10)}${'p90'.padStart(10)}`,
    );
    for (const x of dist) {
      out.push(
        `  ${x.metal.padEnd(16)}${String(x.count).padStart(8)}${String(x.increased).padStart(8)}${String(x.decreased).padStart(8)}${pct(x.p10).padStart(10)}${pct(x.median).padStart(10)}${pct(x.p90).padStart(10)}`,
      );
    }
    out.push('  (ages 21 and 64 in --json)');
  }

  out.push('');
  out.push(`ZIPs whose (county:rating area) locations changed: ${d.zips.changed.length} (ZIPs ${d.zips.before} -> ${d.zips.after})`);
  for (const z of d.zips.changed.slice(0, top))
    out.push(`  ${z.zip} ${z.state}: ${z.before.join(' ') || 'absent'} -> ${z.after.join(' ') || 'absent'}`);
  more(out, d.zips.changed.length, Math.min(top, d.zips.changed.length));
  out.push(`counties whose rating areas changed: ${d.counties.changed.length} (counties ${d.counties.before} -> ${d.counties.after})`);
  for (const c of d.counties.changed.slice(0, top))
    out.push(`  ${c.fips} ${c.name}, ${c.state}: ${c.before.join(',') || 'absent'} -> ${c.after.join(',') || 'absent'}`);
  more(out, d.counties.changed.length, Math.min(top, d.counties.changed.length));

  out.push('');
  const changedAreas = d.slcsp.areas.filter((s) => s.before !== s.after);
  out.push(
    `SLCSP at age ${d.slcsp.age}: ${d.slcsp.changed} of ${d.slcsp.areas.length} rating areas changed${changedAreas.length > 0 ? `; largest ${Math.min(top, changedAreas.length)} by |change|:` : ''}`,
  );
  for (const s of [...changedAreas].sort(bySize).slice(0, top)) {
    const delta = s.change === null ? '' : ` (${signed(s.change)}, ${pct(s.relative)})`;
    out.push(`  ${s.state} ${s.rating_area}: ${money(s.before)} -> ${money(s.after)}${delta}`);
  }
  more(out, changedAreas.length, Math.min(top, changedAreas.length));
  out.push('');
  out.push(`compared in ${d.seconds.toFixed(2)} s`);
  return out.join('\n');
}

/** Largest relative change first; an area that appeared or disappeared counts as the largest. */
function bySize(x: SlcspChange, y: SlcspChange): number {
  const size = (s: SlcspChange): number => (s.relative === null ? Number.MAX_VALUE : Math.abs(s.relative));
  return Math.sign(size(y) - size(x)) || x.state.localeCompare(y.state) || x.rating_area - y.rating_area;
}
