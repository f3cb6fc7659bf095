/**
 * @module Immutable parts of plan summaries, built once per build from the LMDB detail records.
 *
 * A summary row of a search page is these shared parts plus the premium for the requested age. The
 * on-exchange standard variant (-01) of every offered plan is here, plus the silver CSR variants
 * (-04/-05/-06) shown to households eligible for cost-sharing reductions.
 */
import { METAL_CODES } from '../engine/build-format.ts';
import type { Dataset } from '../engine/dataset.ts';
import type { MetalLevel, PlanType, PlanVariantRecord } from '../engine/plan-record.ts';
import { InvariantError } from '../invariant.ts';
import { issuerFields } from './issuer-fields.ts';

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
  /** Null when the source file leaves it blank ({@link issuer_note} says so). */
  readonly issuer: string | null;
  readonly issuer_note: string | null;
  readonly state: string;
  readonly metal_level: MetalLevel;
  readonly plan_type: PlanType;
  readonly deductible: { readonly individual: number | null; readonly family: number | null };
  readonly max_out_of_pocket: { readonly individual: number | null; readonly family: number | null };
  readonly hsa_eligible: boolean;
  readonly national_network: boolean;
  readonly links: PlanVariantRecord['links'];
  /**
   * Share of the premium that pays for essential health benefits (EHBPercentTotalPremium), when the
   * file gives one below 1: the credit cannot pay the rest (26 U.S.C. 36B(b)(3)(D)). Not shown; null
   * when unknown or 1.
   */
  readonly ehb_share: number | null;
}

export interface PlanCatalog {
  /** Summary parts of a plan variant, by plan index and variant suffix. */
  get(planIndex: number, variant: string): SummaryParts | undefined;
  /** What another thread needs to attach to this catalog without reading LMDB again. */
  readonly image: CatalogImage;
}

/**
 * The catalog as REST worker threads share it: every entry's JSON fragments in one shared byte buffer
 * and its numbers in shared columns, written once by the thread that opened the build. A worker keeps
 * no copy of them; the national catalog is ~11 MB of fragments and was ~36 MB per thread as objects.
 */
export interface CatalogImage {
  /** UTF-8 fragments: per entry the prefix (to `"premium":`), then the null-credit suffix. */
  readonly bytes: SharedArrayBuffer;
  /** Int32 × 3 per slot (plan index × 4 + variant): prefix start, suffix start, end; -1 when no entry. */
  readonly offsets: SharedArrayBuffer;
  /** Float64 × 4 per slot: individual and family deductible, individual and family maximum out-of-pocket; NaN for null. */
  readonly money: SharedArrayBuffer;
  /** Uint8 per slot: the METAL_CODES index. */
  readonly metal: SharedArrayBuffer;
  /** Float64 per slot: the EHB share of the premium; NaN when unknown or 1. */
  readonly ehb: SharedArrayBuffer;
}

const VARIANTS = ['01', '04', '05', '06'] as const;
const NULL_CREDIT = ',"premium_with_credit":null';
const NULL_CREDIT_BYTES = Buffer.byteLength(NULL_CREDIT);

/** The two fragments of a summary around its premiums, in the plan summary schema's member order. */
function fragments(rec: PlanVariantRecord, baseUrl: string, year: number): { prefix: string; nullCreditSuffix: string } {
  const head = JSON.stringify({
    _links: { self: { href: `${baseUrl}/v1/health/plans/${rec.id}?year=${year}` } },
    id: rec.id,
    name: rec.name,
    ...issuerFields(rec),
    state: rec.state,
    metal_level: rec.metal_level,
    plan_type: rec.plan_type,
  });
  const tail = JSON.stringify({
    deductible: { individual: rec.deductible.individual_tier1, family: rec.deductible.family_tier1 },
    max_out_of_pocket: { individual: rec.max_out_of_pocket.individual_tier1, family: rec.max_out_of_pocket.family_tier1 },
    hsa_eligible: rec.hsa_eligible,
    national_network: rec.national_network,
    links: rec.links,
  });
  return { prefix: `${head.slice(0, -1)},"premium":`, nullCreditSuffix: `${NULL_CREDIT},${tail.slice(1)}` };
}

/** The members of a summary that are not premiums, as parsed back from its fragments. */
interface ParsedSummary {
  readonly _links: SummaryParts['_links'];
  readonly id: string;
  readonly name: string;
  readonly issuer: string | null;
  readonly issuer_note: string | null;
  readonly state: string;
  readonly plan_type: PlanType;
  readonly hsa_eligible: boolean;
  readonly national_network: boolean;
  readonly links: PlanVariantRecord['links'];
}

/**
 * A class, not a spread object literal: every entry then shares one hidden class, so the per-row reads
 * of a search page stay monomorphic. What a REST search reads per row (fragments, metal level,
 * deductibles) is set at construction; the other members are parsed from the fragments on first use
 * (MCP, compare, JSON.stringify), so a REST worker holds no string of them.
 */
class CatalogEntry implements SummaryParts {
  /** The entry's bytes in the shared buffer: the prefix up to `#mid`, then the null-credit suffix. */
  readonly #shared: Buffer;
  readonly #mid: number;
  #own: SummaryJson | undefined;
  readonly metal_level: MetalLevel;
  readonly deductible: SummaryParts['deductible'];
  readonly max_out_of_pocket: SummaryParts['max_out_of_pocket'];
  readonly ehb_share: number | null;
  #parsed: ParsedSummary | undefined;

  constructor(shared: Buffer, mid: number, metal: MetalLevel, money: Float64Array, at: number, ehb: number) {
    this.#shared = shared;
    this.#mid = mid;
    this.metal_level = metal;
    this.deductible = { individual: orNull(money[at]!), family: orNull(money[at + 1]!) };
    this.max_out_of_pocket = { individual: orNull(money[at + 2]!), family: orNull(money[at + 3]!) };
    this.ehb_share = orNull(ehb);
  }

  /**
   * The fragments a row is written from: a thread-private copy of the shared bytes, made on the first
   * read. V8 copies out of shared memory through a slow path: the ~50 fragment copies of a 25-plan page
   * took 6.8 µs from shared views and 1.9 µs from private buffers (one thread, national build, 400 bench
   * search pages). An entry made only for its numbers (a CSR view's deductibles) copies nothing, so a
   * thread holds copies only of the plans it wrote, at most the catalog's ~11 MB. Kept on the entry,
   * not in a side table: the WeakMap lookup that was there cost 2 % of a search request under `perf`.
   */
  get [SUMMARY_JSON](): SummaryJson {
    return (this.#own ??= fragmentViews(Buffer.from(this.#shared), this.#mid));
  }

  get #fields(): ParsedSummary {
    const j = this.#shared;
    return (this.#parsed ??= JSON.parse(`${j.toString('utf8', 0, this.#mid)}0${j.toString('utf8', this.#mid)}`) as ParsedSummary);
  }
  get _links(): SummaryParts['_links'] {
    return this.#fields._links;
  }
  get id(): string {
    return this.#fields.id;
  }
  get name(): string {
    return this.#fields.name;
  }
  get issuer(): string | null {
    return this.#fields.issuer;
  }
  get issuer_note(): string | null {
    return this.#fields.issuer_note;
  }
  get state(): string {
    return this.#fields.state;
  }
  get plan_type(): PlanType {
    return this.#fields.plan_type;
  }
  get hsa_eligible(): boolean {
    return this.#fields.hsa_eligible;
  }
  get national_network(): boolean {
    return this.#fields.national_network;
  }
  get links(): PlanVariantRecord['links'] {
    return this.#fields.links;
  }
}

function orNull(n: number): number | null {
  return Number.isNaN(n) ? null : n;
}

/** Builds the catalog of an opened build from its LMDB detail records, in shared memory. */
export function buildPlanCatalog(ds: Dataset, baseUrl: string, year: number): PlanCatalog {
  const slotCount = ds.planCount * VARIANTS.length;
  const found: Array<{ slot: number; rec: PlanVariantRecord; prefix: string; nullCreditSuffix: string }> = [];
  let size = 0;
  const ids = ds.planIds();
  for (let i = 0; i < ids.length; i++) {
    for (let v = 0; v < VARIANTS.length; v++) {
      if (v > 0 && ds.plan(i).metal !== 'silver') break;
      const rec = ds.planRecord(`${ids[i]}-${VARIANTS[v]}`);
      if (rec === undefined) continue;
      const f = fragments(rec, baseUrl, year);
      size += Buffer.byteLength(f.prefix) + Buffer.byteLength(f.nullCreditSuffix);
      found.push({ slot: i * VARIANTS.length + v, rec, ...f });
    }
  }
  const image: CatalogImage = {
    bytes: new SharedArrayBuffer(size),
    offsets: new SharedArrayBuffer(slotCount * 3 * 4),
    money: new SharedArrayBuffer(slotCount * 4 * 8),
    metal: new SharedArrayBuffer(slotCount),
    ehb: new SharedArrayBuffer(slotCount * 8),
  };
  const bytes = Buffer.from(image.bytes);
  const offsets = new Int32Array(image.offsets).fill(-1);
  const money = new Float64Array(image.money);
  const metal = new Uint8Array(image.metal);
  const ehb = new Float64Array(image.ehb);
  let at = 0;
  for (const { slot, rec, prefix, nullCreditSuffix } of found) {
    offsets[slot * 3] = at;
    at += bytes.write(prefix, at, 'utf8');
    offsets[slot * 3 + 1] = at;
    at += bytes.write(nullCreditSuffix, at, 'utf8');
    offsets[slot * 3 + 2] = at;
    const m = [
      rec.deductible.individual_tier1,
      rec.deductible.family_tier1,
      rec.max_out_of_pocket.individual_tier1,
      rec.max_out_of_pocket.family_tier1,
    ];
    for (let k = 0; k < 4; k++) money[slot * 4 + k] = m[k] ?? Number.NaN;
    const code = METAL_CODES.indexOf(rec.metal_level);
    // The compiler writes only METAL_LEVELS (build/puf/plan-attributes.ts refuses any other row).
    if (code < 0) throw new InvariantError(`plan ${rec.id}: unknown metal level ${rec.metal_level}`);
    metal[slot] = code;
    const share = rec.ehb_percent_premium;
    // A share of 1 (or an out-of-range value the file should not carry) caps nothing.
    ehb[slot] = share !== null && share > 0 && share < 1 ? share : Number.NaN;
  }
  return attachPlanCatalog(image);
}

/** The three fragment views of one entry's bytes (prefix, then the null-credit suffix from `mid`). */
function fragmentViews(entryBytes: Buffer, mid: number): SummaryJson {
  const nullCreditSuffixBytes = entryBytes.subarray(mid);
  return {
    prefixBytes: entryBytes.subarray(0, mid),
    suffixBytes: nullCreditSuffixBytes.subarray(NULL_CREDIT_BYTES),
    nullCreditSuffixBytes,
  };
}

/**
 * A catalog over shared fragments (built here or by another thread). Entries are made on first use
 * and kept: a page's rows then cost an array read each, and a thread holds objects only for plans it served.
 *
 * A row reads an entry's fragments from a thread-private copy of the shared bytes, made on the first
 * read (see CatalogEntry).
 */
export function attachPlanCatalog(image: CatalogImage): PlanCatalog {
  const bytes = Buffer.from(image.bytes);
  const offsets = new Int32Array(image.offsets);
  const money = new Float64Array(image.money);
  const metal = new Uint8Array(image.metal);
  const ehb = new Float64Array(image.ehb);
  const slots: Array<CatalogEntry | undefined> = new Array<CatalogEntry | undefined>(offsets.length / 3).fill(undefined);
  const entry = (slot: number): CatalogEntry | undefined => {
    const made = slots[slot];
    if (made !== undefined) return made;
    const start = offsets[slot * 3]!;
    if (start < 0) return undefined;
    const mid = offsets[slot * 3 + 1]!;
    const shared = bytes.subarray(start, offsets[slot * 3 + 2]!);
    return (slots[slot] = new CatalogEntry(shared, mid - start, METAL_CODES[metal[slot]!]!, money, slot * 4, ehb[slot]!));
  };
  return {
    image,
    get(planIndex, variant) {
      const v = variant === '01' ? 0 : VARIANTS.indexOf(variant as (typeof VARIANTS)[number]);
      return v < 0 ? undefined : entry(planIndex * VARIANTS.length + v);
    },
  };
}
