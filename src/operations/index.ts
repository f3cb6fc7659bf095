/**
 * @module Every operation, in route order: literal paths (`compare`, `aptc-estimate`, `crosswalk`)
 * before `/plans/{plan_id}`, which would otherwise capture them.
 */
import { comparePlans } from './compare-plans.ts';
import { estimateAptcOperation } from './estimate-aptc.ts';
import { estimateOopOperation } from './estimate-oop.ts';
import { getCrosswalk } from './get-crosswalk.ts';
import { listIssuers } from './list-issuers.ts';
import { listYears } from './list-years.ts';
import { lookupZip } from './lookup-zip.ts';
import type { Operation } from './operation.ts';
import { getPlanById } from './plan-detail.ts';
import { searchPlansOperation } from './search-plans.ts';

export const OPERATIONS: ReadonlyArray<Operation<never>> = [
  searchPlansOperation,
  comparePlans,
  estimateAptcOperation,
  getCrosswalk,
  estimateOopOperation,
  getPlanById,
  lookupZip,
  listYears,
  listIssuers,
];
