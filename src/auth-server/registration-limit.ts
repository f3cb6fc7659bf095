/**
 * @module Dynamic client registrations per client address (issue #21, finding 5): a token bucket of
 * {@link REGISTRATIONS_PER_HOUR}, refilled evenly over the hour, in memory.
 *
 * An MCP client registers once per installation; a person trying clients registers a few. One address
 * sent 80,000 in 66 s, all 201. Beyond the bucket, `POST /reg` answers 429 with `Retry-After` before the
 * provider sees it. The table is bounded (least recently used addresses go first, full buckets before
 * anything else), so rotating addresses cannot grow it. Per process: instances behind one name each
 * allow their share (the README says so); unused registrations also expire (unused-clients.ts).
 */

export const REGISTRATIONS_PER_HOUR = 20;
const HOUR_MS = 3_600_000;
const MAX_ADDRESSES = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

export interface RegistrationLimit {
  /** Takes one registration for `address`: 0 when allowed, else the seconds until the next one is. */
  take(address: string): number;
}

export function createRegistrationLimit(clock: () => number = Date.now, perHour = REGISTRATIONS_PER_HOUR): RegistrationLimit {
  const buckets = new Map<string, Bucket>();
  const refill = (b: Bucket, now: number): void => {
    b.tokens = Math.min(perHour, b.tokens + ((now - b.at) * perHour) / HOUR_MS);
    b.at = now;
  };
  const evict = (now: number): void => {
    for (const [address, b] of buckets) {
      refill(b, now);
      if (b.tokens >= perHour) buckets.delete(address);
      if (buckets.size < MAX_ADDRESSES) return;
    }
    // Map order is least recently used first (taken buckets are moved to the end).
    while (buckets.size >= MAX_ADDRESSES) buckets.delete(buckets.keys().next().value!);
  };
  return {
    take(address) {
      const now = clock();
      let b = buckets.get(address);
      if (b === undefined) {
        if (buckets.size >= MAX_ADDRESSES) evict(now);
        b = { tokens: perHour, at: now };
      } else {
        buckets.delete(address);
        refill(b, now);
      }
      buckets.set(address, b);
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return 0;
      }
      return Math.ceil(((1 - b.tokens) * HOUR_MS) / perHour / 1000);
    },
  };
}
