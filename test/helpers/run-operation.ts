/** @module An operation run by its REST path through `execute()`, as both fronts run it, for tests over a registry. */
import assert from 'node:assert/strict';
import type { DataRegistry } from '../../src/operations/data-registry.ts';
import { OPERATIONS } from '../../src/operations/index.ts';
import { type BodyResult, executeToBody, type Operation } from '../../src/operations/operation.ts';
import { type RequestScratch, threadScratch } from '../../src/operations/request-scratch.ts';
import type { Tier } from '../../src/policy/tiers.ts';

/** The result of the operation at `path` for `query` (a query string) and `pathParams`. */
export function runOperation(
  registry: DataRegistry,
  path: string,
  query: string,
  pathParams: Record<string, string> = {},
  tier: Tier = 'pro',
  baseUrl = 'http://api.test',
): BodyResult {
  const op: Operation<never> | undefined = OPERATIONS.find((o) => o.path === path);
  assert.ok(op !== undefined, `no operation at ${path}`);
  return executeToBody(op, { registry, baseUrl }, tier, [...new URLSearchParams(query)], pathParams, threadScratch());
}

/** The body of a successful run; fails the test with the problem otherwise. */
export function bodyOf(r: BodyResult): Record<string, unknown> {
  assert.ok(r.ok, `expected a body, got ${JSON.stringify(!r.ok && r.problem)}`);
  return r.body as Record<string, unknown>;
}

/** `use` run in a borrow of the thread's request scratch, as a front runs a request. */
export function inScratch<T>(use: (scratch: RequestScratch) => T): T {
  const scratch = threadScratch().borrow();
  try {
    return use(scratch);
  } finally {
    scratch.release();
  }
}
