/**
 * @module Dynamic client registrations per client address: a token bucket of
 * {@link REGISTRATIONS_PER_HOUR}, refilled evenly over the hour, in memory on one host and in the
 * shared Redis for several instances (redis-registration-limit.ts, the same buckets).
 *
 * An MCP client registers once per installation; a person trying clients registers a few. One address
 * sent 80,000 in 66 s, all 201. Beyond the bucket, `POST /reg` answers 429 with `Retry-After` before the
 * provider sees it. The table is bounded (least recently used addresses go first, full buckets before
 * anything else), so rotating addresses cannot grow it. Unused registrations also expire
 * (unused-clients.ts).
 *
 * Addresses are cheap (an IPv6 /64, a botnet), so the whole server also has a bucket of
 * {@link ALL_REGISTRATIONS_PER_HOUR}: with the one-day expiry of unused clients, at most ~24,000 unused
 * registrations (~35 MB of oauth.mdb at the measured ~1.4 KB each) can be stored at any time.
 */

export const REGISTRATIONS_PER_HOUR = 20;
/** Every address together; a public MCP server sees one registration per client installation. */
export const ALL_REGISTRATIONS_PER_HOUR = 1_000;
const HOUR_MS = 3_600_000;
const MAX_ADDRESSES = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

export interface Refusal {
  /** Seconds until a registration is allowed again. */
  readonly wait: number;
  /** Whose allowance ran out: this address's, or every address's together. */
  readonly scope: 'address' | 'server';
}

export interface RegistrationLimit {
  /** Takes one registration for `address`: null when allowed. Rejects when the shared store cannot answer. */
  take(address: string): Promise<Refusal | null>;
}

const waitFor = (b: Bucket, perHour: number): number => Math.ceil(((1 - b.tokens) * HOUR_MS) / perHour / 1000);

export function createRegistrationLimit(
  clock: () => number = Date.now,
  perHour = REGISTRATIONS_PER_HOUR,
  allPerHour = ALL_REGISTRATIONS_PER_HOUR,
): RegistrationLimit {
  const buckets = new Map<string, Bucket>();
  const all: Bucket = { tokens: allPerHour, at: clock() };
  const refill = (b: Bucket, now: number, rate = perHour): void => {
    b.tokens = Math.min(rate, b.tokens + ((now - b.at) * rate) / HOUR_MS);
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
    async take(address) {
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
      if (b.tokens < 1) return { wait: waitFor(b, perHour), scope: 'address' };
      refill(all, now, allPerHour);
      if (all.tokens < 1) return { wait: waitFor(all, allPerHour), scope: 'server' };
      b.tokens -= 1;
      all.tokens -= 1;
      return null;
    },
  };
}
