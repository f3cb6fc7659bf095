/**
 * @module Immutable parts of plan summaries, built once per build from the LMDB detail records.
 *
 * A summary row of a search page is these shared parts plus the premium for the requested age. The
 * on-exchange standard variant (-01) of every offered plan is here, plus the silver CSR variants
 * (-04/-05/-06) shown to households eligible for cost-sharing reductions.
 */
import type { Dataset } from '../engine/dataset.ts';
import type { MetalLevel, PlanType, PlanVariantRecord } from '../engine/plan-record.ts';

/** Pre-serialized JSON of a summary around its two premiums: `prefix + premium + middle + credit + suffix`. */
export const SUMMARY_JSON = Symbol.for('hpd.summary-json');

/** UTF-8 encoded once, so a response is assembled from bytes (no per-request encoding). */
export interface SummaryJson {
  /** From `{` to `"premium":`. */
  readonly prefixBytes: Buffer;
  /** From the comma after the premium with credit to `}`. */
  readonly suffixBytes: Buffer;
  /** `,"premium_with_credit":null` and the suffix: the common case (no credit asked) in one copy. */
  readonly nullCreditSuffixBytes: Buffer;
}

export interface SummaryParts {
  readonly [SUMMARY_JSON]: SummaryJson;
  readonly _links: { readonly self: { readonly href: string } };
  readonly id: string;
  readonly name: string;
  readonly issuer: string;
  readonly state: string;
  readonly metal_level: MetalLevel;
  readonly plan_type: PlanType;
  readonly deductible: { readonly individual: number | null; readonly family: number | null };
  readonly max_out_of_pocket: { readonly individual: number | null; readonly family: number | null };
  readonly hsa_eligible: boolean;
  readonly national_network: boolean;
  readonly links: PlanVariantRecord['links'];
}

export interface PlanCatalog {
  /** Summary parts of a plan variant, by plan index and variant suffix. */
  get(planIndex: number, variant: string): SummaryParts | undefined;
}

const VARIANTS = ['01', '04', '05', '06'] as const;

/**
 * A class, not a spread object literal: every entry then shares one hidden class, so the per-row reads
 * of a search page stay monomorphic (spread copies ended up with thousands of distinct maps and
 * megamorphic lookups on the hot path).
 */
class CatalogEntry implements SummaryParts {
  readonly [SUMMARY_JSON]: SummaryJson;
  readonly _links: SummaryParts['_links'];
  readonly id: string;
  readonly name: string;
  readonly issuer: string;
  readonly state: string;
  readonly metal_level: MetalLevel;
  readonly plan_type: PlanType;
  readonly deductible: SummaryParts['deductible'];
  readonly max_out_of_pocket: SummaryParts['max_out_of_pocket'];
  readonly hsa_eligible: boolean;
  readonly national_network: boolean;
  readonly links: PlanVariantRecord['links'];

  constructor(rec: PlanVariantRecord, baseUrl: string, year: number) {
    this._links = { self: { href: `${baseUrl}/v1/health/plans/${rec.id}?year=${year}` } };
    this.id = rec.id;
    this.name = rec.name;
    this.issuer = rec.issuer;
    this.state = rec.state;
    this.metal_level = rec.metal_level;
    this.plan_type = rec.plan_type;
    this.deductible = { individual: rec.deductible.individual_tier1, family: rec.deductible.family_tier1 };
    this.max_out_of_pocket = { individual: rec.max_out_of_pocket.individual_tier1, family: rec.max_out_of_pocket.family_tier1 };
    this.hsa_eligible = rec.hsa_eligible;
    this.national_network = rec.national_network;
    this.links = rec.links;
    // Field order of the plan summary schema; the two premiums are spliced in per request.
    const head = JSON.stringify({ _links: this._links, id: this.id, name: this.name, issuer: this.issuer, state: this.state, metal_level: this.metal_level, plan_type: this.plan_type });
    const tail = JSON.stringify({ deductible: this.deductible, max_out_of_pocket: this.max_out_of_pocket, hsa_eligible: this.hsa_eligible, national_network: this.national_network, links: this.links });
    const suffix = `,${tail.slice(1)}`;
    this[SUMMARY_JSON] = {
      prefixBytes: Buffer.from(`${head.slice(0, -1)},"premium":`),
      suffixBytes: Buffer.from(suffix),
      nullCreditSuffixBytes: Buffer.from(`,"premium_with_credit":null${suffix}`),
    };
  }
}

export function summaryParts(rec: PlanVariantRecord, baseUrl: string, year: number): SummaryParts {
  return new CatalogEntry(rec, baseUrl, year);
}

export function buildPlanCatalog(ds: Dataset, baseUrl: string, year: number): PlanCatalog {
  // Slot planIndex × 4 + variant: an array read per row of a page instead of a hash lookup.
  const slots: Array<SummaryParts | undefined> = new Array<SummaryParts | undefined>(ds.planCount * VARIANTS.length).fill(undefined);
  const ids = ds.planIds();
  for (let i = 0; i < ids.length; i++) {
    for (let v = 0; v < VARIANTS.length; v++) {
      if (v > 0 && ds.plan(i).metal !== 'silver') break;
      const rec = ds.planRecord(`${ids[i]}-${VARIANTS[v]}`);
      if (rec !== undefined) slots[i * VARIANTS.length + v] = summaryParts(rec, baseUrl, year);
    }
  }
  return {
    get(planIndex, variant) {
      const v = variant === '01' ? 0 : VARIANTS.indexOf(variant as (typeof VARIANTS)[number]);
      return v < 0 ? undefined : slots[planIndex * VARIANTS.length + v];
    },
  };
}
