/**
 * @module Per-plan columns: one index per standard component id (sorted, for stable builds), with the
 * metal level, plan type, state, issuer, flags, deductible and maximum out-of-pocket of its primary
 * variant (-01, else -00, else the first).
 */
import { METAL_CODES, NULL_MONEY, PLAN_FLAG, PLAN_TYPE_CODES } from '../../src/engine/build-format.ts';
import type { PlanVariantRecord } from '../../src/engine/plan-record.ts';

export interface PlanColumns {
  /** Plan index → standard component id. */
  readonly scids: readonly string[];
  /** The variant whose fields describe a plan. */
  primary(scid: string): PlanVariantRecord;
  readonly issuers: ReadonlyArray<{ readonly id: string; readonly name: string }>;
  readonly metal: Uint8Array;
  readonly type: Uint8Array;
  readonly state: Uint8Array;
  readonly issuer: Uint16Array;
  readonly flags: Uint8Array;
  readonly deductible: Float64Array;
  readonly moop: Float64Array;
  readonly names: readonly string[];
}

export function planColumns(variantsByScid: ReadonlyMap<string, PlanVariantRecord[]>, stateIdx: ReadonlyMap<string, number>): PlanColumns {
  const scids = [...variantsByScid.keys()].sort();
  const primary = (scid: string): PlanVariantRecord => {
    const vs = variantsByScid.get(scid)!;
    return vs.find((v) => v.variant === '01') ?? vs.find((v) => v.variant === '00') ?? vs[0]!;
  };
  const issuers: Array<{ id: string; name: string }> = [];
  const issuerIdx = new Map<string, number>();
  const n = scids.length;
  const c = {
    metal: new Uint8Array(n),
    type: new Uint8Array(n),
    state: new Uint8Array(n),
    issuer: new Uint16Array(n),
    flags: new Uint8Array(n),
    deductible: new Float64Array(n),
    moop: new Float64Array(n),
  };
  const names: string[] = [];
  for (let i = 0; i < n; i++) {
    const scid = scids[i]!;
    const v = primary(scid);
    c.metal[i] = METAL_CODES.indexOf(v.metal_level);
    c.type[i] = PLAN_TYPE_CODES.indexOf(v.plan_type);
    c.state[i] = stateIdx.get(v.state) ?? 255;
    let ii = issuerIdx.get(v.issuer_id);
    if (ii === undefined) {
      ii = issuers.length;
      issuers.push({ id: v.issuer_id, name: v.issuer });
      issuerIdx.set(v.issuer_id, ii);
    }
    c.issuer[i] = ii;
    const vs = variantsByScid.get(scid)!;
    c.flags[i] =
      (v.child_only ? PLAN_FLAG.childOnly : 0) |
      (vs.some((x) => x.variant === '01') ? PLAN_FLAG.onExchange : 0) |
      (v.national_network ? PLAN_FLAG.nationalNetwork : 0) |
      (v.hsa_eligible ? PLAN_FLAG.hsaEligible : 0);
    c.deductible[i] = v.deductible.individual_tier1 ?? NULL_MONEY;
    c.moop[i] = v.max_out_of_pocket.individual_tier1 ?? NULL_MONEY;
    names.push(v.name);
  }
  return { scids, primary, issuers, names, ...c };
}
