/**
 * @module A worker thread that hammers a shared quota: `count` consumes for `userId` at `tier`, then
 * posts how many were allowed and the `remaining` each allowed one reported.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { attachSharedQuota } from '../../src/policy/shared-quota.ts';
import type { Tier } from '../../src/policy/tiers.ts';

const { descriptor, userIds, tier, count, now } = workerData as {
  descriptor: unknown;
  userIds: string[];
  tier: Tier;
  count: number;
  now: number;
};
const quota = attachSharedQuota(descriptor, () => now);
const allowed: number[] = [];
let refused = 0;
for (let i = 0; i < count; i++) {
  const d = quota.consume(userIds[i % userIds.length]!, tier);
  if (d.allowed) allowed.push(d.remaining);
  else refused++;
}
parentPort!.postMessage({ allowed, refused });
