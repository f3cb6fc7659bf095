/**
 * @module A plan summary row as objects: the catalog's immutable parts with one request's premiums (MCP,
 * compare, tests; the REST front writes search rows from the same parts as bytes).
 */
import type { MetalLevel } from '../engine/plan-record.ts';
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

  constructor(parts: SummaryParts, premiumCents: number, creditCents: number) {
    this[SUMMARY_JSON] = parts[SUMMARY_JSON];
    this.parts = parts;
    this.premiumCents = premiumCents;
    this.creditCents = creditCents;
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
    };
  }
}

/** A summary row; `creditCents` -1 (or omitted) when no credit was estimated. */
export function summaryRow(parts: SummaryParts, premiumCents: number, creditCents = -1): PlanSummaryRow {
  return new PlanSummaryRow(parts, premiumCents, creditCents);
}

/** Premium after the credit in cents (-1 without an estimate); the credit cannot apply to catastrophic plans. */
export function creditCentsFor(premiumCents: number, aptcMonthly: number | null, metal: MetalLevel): number {
  if (aptcMonthly === null) return -1;
  if (metal === 'catastrophic') return premiumCents;
  return Math.max(0, Math.round((premiumCents / 100 - aptcMonthly) * 100));
}
