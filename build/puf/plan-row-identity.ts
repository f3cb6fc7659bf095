/**
 * @module The columns that identify a plan variant on a Plans PUF row, checked against each other: the
 * medical and the dental rows are identified alike, only their metal levels differ. A row whose identity
 * does not hold is rejected with its file, line, column and reason.
 */
import type { DiagnosticSink } from '../read/diagnostics.ts';
import type { Row } from '../read/table-rows.ts';
import { PLAN_TYPES, PLAN_VARIANT_ID, type PlanType } from '../../src/engine/plan-record.ts';

export interface PlanRowIdentity<M extends string> {
  readonly id: string;
  readonly scid: string;
  /** The two-digit variant suffix of the plan id (00 off exchange, 01 standard, 02–06 CSR). */
  readonly variant: string;
  readonly state: string;
  readonly metal: M;
  readonly planType: PlanType;
  readonly issuerId: string;
}

/** Rejects `row` on `column` for `reason`; always null, for `return reject(…)`. */
export function rejectRow(row: Row, sink: DiagnosticSink, column: string, reason: string): null {
  sink.reject({ ...row.at(column), reason });
  return null;
}

/**
 * The identity of a row whose market and year were already checked; null when rejected. `metals` are
 * the levels of its kind (`kind` names them in the reason: "medical", "dental").
 */
export function planRowIdentity<M extends string>(
  row: Row,
  seen: ReadonlyMap<string, unknown>,
  sink: DiagnosticSink,
  metals: readonly M[],
  kind: string,
): PlanRowIdentity<M> | null {
  const reject = (column: string, reason: string): null => rejectRow(row, sink, column, reason);
  const id = row.get('PlanId');
  const m = PLAN_VARIANT_ID.exec(id);
  if (m === null) return reject('PlanId', 'not a plan variant id (14-character standard component id, hyphen, 2 digits)');
  const scid = row.get('StandardComponentId');
  if (scid !== m[1]) return reject('StandardComponentId', `does not match PlanId ${id}`);
  const state = row.get('StateCode');
  if (!/^[A-Z]{2}$/.test(state) || scid.slice(5, 7) !== state) return reject('StateCode', 'not the two-letter state of the plan id');
  const metal = row.get('MetalLevel').toLowerCase() as M;
  if (!metals.includes(metal)) return reject('MetalLevel', `not a ${kind} metal level (${metals.join(', ')})`);
  const planType = row.get('PlanType').toLowerCase() as PlanType;
  if (!PLAN_TYPES.includes(planType)) return reject('PlanType', `not a plan type (${PLAN_TYPES.join(', ')})`);
  if (seen.has(id)) return reject('PlanId', 'duplicate PlanId; the first row is kept');
  const issuerId = row.get('IssuerId');
  if (!/^\d{5}$/.test(issuerId) || scid.slice(0, 5) !== issuerId) return reject('IssuerId', 'not the 5-digit issuer of the plan id');
  return { id, scid, variant: m[2]!, state, metal, planType, issuerId };
}
