/**
 * @module How names sort in a build (plan names in list orders, issuer names per state): case- and
 * accent-insensitive with numbers compared as numbers, the same on every machine that builds.
 */
export const NAME_COLLATOR = new Intl.Collator('en-US', { sensitivity: 'base', numeric: true });
