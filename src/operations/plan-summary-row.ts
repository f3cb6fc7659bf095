/**
 * @module A plan summary row as objects: the catalog's immutable parts with one request's premiums (MCP,
 * compare, tests; the REST front writes search rows from the same parts as bytes).
 */
import type { MetalLevel } from '../engine/plan-record.ts';
import type { MemberPremium } from './household-quote.ts';
import { SUMMARY_JSON, type SummaryParts } from './plan-catalog.ts';

/**
 * A plan summary: the catalog's immutable parts with this request's premiums. A class with four
 * fields rather than a fifteen-member object per row: the REST front writes the row from the
 * pre-serialized fragment and the premiums in cents, and never reads the members; MCP and
 * JSON.stringify get them via toJSON.
 */
export class PlanSummaryRow {
  readonly [SUMMARY_JSON]: SummaryParts[typeof SUMMARY_JSON];
  readonly parts: SummaryParts;
  /** Monthly premium before credit, whole cents. */
  readonly premiumCents: number;
  /** Monthly premium after the estimated credit, whole cents; -1 when no credit was estimated. */
  readonly creditCents: number;
  /** A household's member breakdown (compare with ages); null for one age. */
  readonly members: readonly MemberPremium[] | null;

  constructor(parts: SummaryParts, premiumCents: number, creditCents: number, members: readonly MemberPremium[] | null = null) {
    this[SUMMARY_JSON] = parts[SUMMARY_JSON];
    this.parts = parts;
    this.premiumCents = premiumCents;
    this.creditCents = creditCents;
    this.members = members;
  }

  get premium(): number {
    return this.premiumCents / 100;
  }

  get premium_with_credit(): number | null {
    return this.creditCents < 0 ? null : this.creditCents / 100;
  }

  get id(): string {
    return this.parts.id;
  }

  get name(): string {
    return this.parts.name;
  }

  get metal_level(): string {
    return this.parts.metal_level;
  }

  get deductible(): SummaryParts['deductible'] {
    return this.parts.deductible;
  }

  get max_out_of_pocket(): SummaryParts['max_out_of_pocket'] {
    return this.parts.max_out_of_pocket;
  }

  toJSON(): Record<string, unknown> {
    const p = this.parts;
    return {
      _links: p._links,
      id: p.id,
      name: p.name,
      issuer: p.issuer,
      issuer_note: p.issuer_note,
      state: p.state,
      metal_level: p.metal_level,
      plan_type: p.plan_type,
      premium: this.premium,
      premium_with_credit: this.premium_with_credit,
      deductible: p.deductible,
      max_out_of_pocket: p.max_out_of_pocket,
      hsa_eligible: p.hsa_eligible,
      national_network: p.national_network,
      links: p.links,
      members: this.members ?? undefined,
    };
  }
}

/** A summary row; `creditCents` -1 (or omitted) when no credit was estimated. */
export function summaryRow(
  parts: SummaryParts,
  premiumCents: number,
  creditCents = -1,
  members: readonly MemberPremium[] | null = null,
): PlanSummaryRow {
  return new PlanSummaryRow(parts, premiumCents, creditCents, members);
}

/**
 * Premium after the credit in cents (-1 without an estimate). The credit cannot apply to catastrophic
 * plans, and never pays the part of the premium that is not for essential health benefits where the
 * plan states its EHB share (`ehbShare`, rounded to the cent): it is capped at that share of the premium.
 */
export function creditCentsFor(premiumCents: number, aptcMonthly: number | null, metal: MetalLevel, ehbShare: number | null): number {
  if (aptcMonthly === null) return -1;
  if (metal === 'catastrophic') return premiumCents;
  const aptcCents = Math.round(aptcMonthly * 100);
  const credit = ehbShare === null ? aptcCents : Math.min(aptcCents, Math.round(premiumCents * ehbShare));
  return Math.max(0, premiumCents - credit);
}
