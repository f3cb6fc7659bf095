/**
 * @module Every operation, in route order: literal paths (`compare`, `aptc-estimate`, `crosswalk`)
 * before `/plans/{plan_id}`, which would otherwise capture them.
 */
import { checkIchraAffordabilityOperation } from './check-ichra-affordability.ts';
import { comparePlansOperation } from './compare-plans.ts';
import { estimateAptcOperation } from './estimate-aptc.ts';
import { estimateOutOfPocketOperation } from './estimate-out-of-pocket.ts';
import { getDentalPlanDetailsOperation } from './get-dental-plan-details.ts';
import { getPlanCrosswalkOperation } from './get-plan-crosswalk.ts';
import { getPlanDetailsOperation } from './get-plan-details.ts';
import { getPlanStatsOperation } from './get-plan-stats.ts';
import { listIssuersOperation } from './list-issuers.ts';
import { listPlanYearsOperation } from './list-plan-years.ts';
import { lookupZipOperation } from './lookup-zip.ts';
import type { Operation } from './operation.ts';
import { searchDentalPlansOperation } from './search-dental-plans.ts';
import { searchPlansOperation } from './search-plans.ts';

export const OPERATIONS = [
  searchPlansOperation,
  comparePlansOperation,
  getPlanStatsOperation,
  estimateAptcOperation,
  checkIchraAffordabilityOperation,
  getPlanCrosswalkOperation,
  estimateOutOfPocketOperation,
  getPlanDetailsOperation,
  lookupZipOperation,
  listPlanYearsOperation,
  listIssuersOperation,
  searchDentalPlansOperation,
  getDentalPlanDetailsOperation,
] as const satisfies ReadonlyArray<Operation<never>>;

/** The OpenAPI operationIds, for code that names an operation by its public id. */
export type OperationId = (typeof OPERATIONS)[number]['id'];
