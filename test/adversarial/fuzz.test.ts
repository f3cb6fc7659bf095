/**
 * @module The adversarial fuzzer in the test suite: 5,000 seeded cases over every REST route and the
 * MCP endpoint against `hpd serve` in a child process (test/adversarial/fuzz-cases.ts says what is
 * sent, fuzz-driver.ts what counts as a failure). Deterministic: a failure prints its seed and case
 * index, replayed with `npm run fuzz -- --seed SEED --only INDEX`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { describeFailure, learnContext, runCases, type RunResult } from './fuzz-driver.ts';
import { startFuzzService, type FuzzService } from './fuzz-service.ts';

const SEED = 20_250_101;
const CASES = 5_000;
/** Growth of the child's resident set over the run, after a warm-up of 500 cases. */
const RSS_GROWTH_KIB = 64 * 1024;

let svc: FuzzService;
let result: RunResult;

before(async () => {
  svc = await startFuzzService();
  result = await runCases(svc, SEED, 0, CASES, { ctx: await learnContext(svc), concurrency: 8 });
});
after(async () => {
  await svc?.close();
});

test(`${CASES} adversarial requests (seed ${SEED}): no 5xx, no timeout, every 4xx a problem document`, () => {
  assert.equal(result.sent, CASES, `only ${result.sent} cases were sent`);
  const lines = result.failures.map(describeFailure);
  assert.equal(
    result.failures.length,
    0,
    `${lines.length} failures (seed ${SEED}; replay: npm run fuzz -- --seed ${SEED} --only INDEX):\n${lines.slice(0, 40).join('\n')}`,
  );
});

test('the service process is alive after the run and still answers', async () => {
  assert.ok(svc.alive(), `the child exited; stderr tail:\n${svc.stderr().slice(-3000)}`);
  const res = await fetch(`http://127.0.0.1:${svc.restPort}/healthz`);
  assert.equal(res.status, 200);
  await res.text();
});

test('resident memory stays bounded over the run', () => {
  assert.ok(result.rssStartKiB !== null && result.rssEndKiB !== null, 'RSS readable from /proc');
  const growth = result.rssEndKiB - result.rssStartKiB;
  assert.ok(
    growth <= RSS_GROWTH_KIB,
    `RSS grew by ${growth} KiB (from ${result.rssStartKiB} to ${result.rssEndKiB} KiB, max ${result.rssMaxKiB}), bound ${RSS_GROWTH_KIB} KiB`,
  );
});
