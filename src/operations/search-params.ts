/**
 * @module The validated parameters of a plan search (search-plans.ts declares their query), which its
 * page model (search-page.ts) keeps for the links it writes.
 */
import type { SortKey } from '../engine/dataset.ts';
import type { PlanType } from '../engine/plan-record.ts';

export interface SearchParams {
  zip: string;
  /** Exactly one of age and ages is given (the query's alternatives). */
  age?: number;
  ages?: number[];
  year: number;
  county_fips?: string;
  metal_level?: string;
  plan_type?: PlanType;
  issuer?: string;
  hsa_eligible?: boolean;
  max_premium?: number;
  max_deductible?: number;
  sort_by: SortKey;
  sort_order: 'asc' | 'desc';
  cursor?: string;
  page: number;
  per_page: number;
  income?: number;
  household_size?: number;
}
