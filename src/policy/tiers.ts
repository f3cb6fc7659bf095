/**
 * @module Subscription tiers and their daily request allowances (contract §3.1).
 *
 * The tier names are the wire values (`required_tier` in 402 problems) and the values stored in user
 * records, so they are lower case. Limits are fixed by the contract but can be overridden per
 * deployment (e.g. a staging box with tiny limits to exercise 429s) through environment variables;
 * a bad override fails at startup rather than silently falling back to the default.
 */

export const TIERS = ['free', 'pro', 'enterprise'] as const;

export type Tier = (typeof TIERS)[number];

/** Requests per UTC day for each tier (contract §3.1). */
export const DEFAULT_DAILY_LIMITS: Readonly<Record<Tier, number>> = Object.freeze({
  free: 100,
  pro: 10_000,
  enterprise: 100_000,
});

/** The environment variable that overrides each tier's daily limit. */
export const QUOTA_ENV_VARS = {
  free: 'HPD_QUOTA_FREE',
  pro: 'HPD_QUOTA_PRO',
  enterprise: 'HPD_QUOTA_ENTERPRISE',
} as const satisfies Record<Tier, string>;

const RANK: Readonly<Record<Tier, number>> = { free: 0, pro: 1, enterprise: 2 };

/** Type guard for values read from the command line, the store or a token claim. */
export function isTier(value: unknown): value is Tier {
  return typeof value === 'string' && Object.hasOwn(RANK, value);
}

/**
 * Position of a tier in the upgrade order, for gates such as `tierRank(caller) >= tierRank('pro')`.
 *
 * @example tierRank('free') < tierRank('pro') // true
 */
export function tierRank(tier: Tier): number {
  return RANK[tier];
}

/**
 * The daily limit of each tier: the contract defaults, overridden by HPD_QUOTA_FREE / HPD_QUOTA_PRO /
 * HPD_QUOTA_ENTERPRISE. An empty variable counts as unset (as HPD_DATA_DIR does in cli/paths.ts).
 *
 * @throws Error naming the variable when an override is not a positive integer.
 * @example dailyLimits({ HPD_QUOTA_FREE: '3' }) // { free: 3, pro: 10000, enterprise: 100000 }
 */
export function dailyLimits(env: NodeJS.ProcessEnv = process.env): Readonly<Record<Tier, number>> {
  const limits: Record<Tier, number> = { ...DEFAULT_DAILY_LIMITS };
  for (const tier of TIERS) {
    const name = QUOTA_ENV_VARS[tier];
    const text = env[name];
    if (text === undefined || text === '') continue;
    // A strict pattern rather than Number(): Number accepts '1e3', '0x10', ' 5 ' and '5.0'.
    const value = /^[1-9][0-9]*$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(value)) {
      throw new Error(`${name} must be a positive integer (requests per day), got "${text}"`);
    }
    limits[tier] = value;
  }
  return Object.freeze(limits);
}
