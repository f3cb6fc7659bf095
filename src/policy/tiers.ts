/**
 * @module Subscription tiers and their daily request allowances (docs/compatibility.md#tiers).
 *
 * The tier names are the wire values (`required_tier` in 402 problems) and the values stored in user
 * records, so they are lower case. Limits are fixed by the public API but can be overridden per
 * deployment (e.g. a staging box with tiny limits to exercise 429s) by HPD_QUOTA_FREE / _PRO /
 * _ENTERPRISE, declared with the other variables in src/config/settings.ts.
 */

export const TIERS = ['free', 'pro', 'enterprise'] as const;

export type Tier = (typeof TIERS)[number];

/** Requests per UTC day for each tier (docs/compatibility.md#tiers). */
export const DEFAULT_DAILY_LIMITS: Readonly<Record<Tier, number>> = Object.freeze({
  free: 100,
  pro: 10_000,
  enterprise: 100_000,
});

/** Tiers above free: the ones a 402 can ask for (`required_tier`). */
export const PAID_TIERS = TIERS.filter((t): t is Exclude<Tier, 'free'> => t !== 'free');
export type PaidTier = (typeof PAID_TIERS)[number];

/** A tier's position in {@link TIERS}, which lists them in upgrade order. */
const RANK = Object.fromEntries(TIERS.map((t, i) => [t, i])) as Readonly<Record<Tier, number>>;

/** Type guard for values read from the command line, the store or a token claim. */
export function isTier(value: unknown): value is Tier {
  return typeof value === 'string' && Object.hasOwn(RANK, value);
}

/** Position of each tier in the upgrade order, for gates such as `TIER_RANK[caller] >= TIER_RANK.pro`. */
export const TIER_RANK: Readonly<Record<Tier, number>> = RANK;
