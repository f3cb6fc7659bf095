/**
 * The pieces of the open-loop and realistic-search runs that need no server: reading wrk2's latency
 * distributions (every unit it prints), the realistic stream's determinism and shape, and the LRU
 * estimate of the search cache's hit rate.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ZipLocation } from '../../src/engine/dataset.ts';
import { lruHits, realisticSearch, weightedLocations } from '../../bench/lib/realistic.ts';
import { parseDuration, parseWrk2Latency } from '../../bench/lib/wrk2.ts';

/** wrk2 44a94c1's `--latency -U` output, shortened (the detailed spectra keep two lines each). */
const OUTPUT = `Running 2s test @ http://127.0.0.1:18777/
  1 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     5.19ms   10.68ms  69.38ms   90.38%
    Req/Sec       -nan      -nan   0.00      0.00%
  Latency Distribution (HdrHistogram - Recorded Latency)
 50.000%  850.00us
 75.000%    2.71ms
 90.000%   14.96ms
 99.000%   54.94ms
 99.900%   64.89ms
 99.990%    1.02s
 99.999%    1.50m
100.000%    1.50m

  Detailed Percentile spectrum:
       Value   Percentile   TotalCount 1/(1-Percentile)

       0.176     0.000000            1         1.00
       0.558     0.100000           96         1.11
#[Mean    =        5.194, StdDeviation   =       10.680]
----------------------------------------------------------

  Latency Distribution (HdrHistogram - Uncorrected Latency (measured without taking delayed starts into account))
 50.000%  313.00us
 75.000%    1.01ms
 90.000%    3.81ms
 99.000%   46.53ms
 99.900%   53.12ms
 99.990%   53.12ms
 99.999%   53.12ms
100.000%   53.12ms

  Detailed Percentile spectrum:
       Value   Percentile   TotalCount 1/(1-Percentile)
      53.119     1.000000          956          inf
----------------------------------------------------------
  964 requests in 2.12s, 124.74KB read
Requests/sec:    454.52
`;

test('wrk2 durations in every unit it prints are read as ms', () => {
  assert.equal(parseDuration('850.00us'), 0.85);
  assert.equal(parseDuration('1.23ms'), 1.23);
  assert.equal(parseDuration('2.01s'), 2010);
  assert.equal(parseDuration('1.50m'), 90_000);
  assert.equal(parseDuration('1.00h'), 3_600_000);
  assert.throws(() => parseDuration('-nan'), /not a wrk2 duration/);
});

test('the corrected and uncorrected distributions of wrk2 --latency -U are read apart', () => {
  const l = parseWrk2Latency(OUTPUT);
  assert.deepEqual(l.corrected, { p50: 0.85, p75: 2.71, p90: 14.96, p99: 54.94, p999: 64.89, p9999: 1020, max: 90_000 });
  assert.deepEqual(l.uncorrected, { p50: 0.313, p75: 1.01, p90: 3.81, p99: 46.53, p999: 53.12, p9999: 53.12, max: 53.12 });
  // Without -U there is no second block; without --latency, nothing to read.
  const correctedOnly = OUTPUT.slice(0, OUTPUT.indexOf('  Latency Distribution (HdrHistogram - Uncorrected'));
  assert.equal(parseWrk2Latency(correctedOnly).uncorrected, null);
  assert.throws(() => parseWrk2Latency('Running 2s test\n  964 requests in 2.12s\n'), /no latency distribution/);
  assert.throws(() => parseWrk2Latency(OUTPUT.replace(' 99.900%   64.89ms\n', '')), /lacks p999/);
});

const loc = (zip: string, countyFips: string, share: number): ZipLocation => ({
  zip,
  state: 'TX',
  countyFips,
  countyName: 'X',
  ratingArea: 1,
  areaIndex: 0,
  residentialShare: share,
  listId: 0,
  primary: false,
});

test('the realistic stream: residential weights, deterministic, distinct universe, Zipf-skewed', () => {
  const zips = Array.from({ length: 300 }, (_, i) => {
    const zip = String(10_000 + i);
    // Every tenth ZIP is split between two counties; every 50th is business-only (ratio 0).
    const locations =
      i % 50 === 0 ? [loc(zip, '48001', 0)] : i % 10 === 0 ? [loc(zip, '48001', 0.7), loc(zip, '48003', 0.3)] : [loc(zip, '48005', 1)];
    return { zip, locations };
  });
  const weighted = weightedLocations(zips);
  assert.equal(weighted.length, 300 - 6 + 24, 'business-only ZIPs dropped, split ZIPs twice');
  assert.ok(weighted.every((w) => w.weight > 0));
  assert.equal(
    weighted.find((w) => w.zip === '10010' && w.countyFips === '48003')?.weight,
    0.3,
    'a second county is named (county_fips) with its share',
  );
  assert.equal(weighted.find((w) => w.zip === '10010' && w.countyFips === null)?.weight, 0.7, 'the primary county needs no county_fips');

  const a = realisticSearch(weighted, 20_000, 50_000);
  const b = realisticSearch(weighted, 20_000, 50_000);
  assert.deepEqual(a.sequence.slice(0, 1000), b.sequence.slice(0, 1000), 'same seed, same stream');
  assert.equal(a.universe.length, 20_000);
  assert.equal(new Set(a.universe).size, a.universe.length, 'the universe has no repeats');
  assert.ok(a.universe.every((u) => /^\/v1\/health\/plans\?zip=\d{5}&age=\d+/.test(u)));
  assert.ok(!a.universe.some((u) => /zip=10000&|zip=10050&/.test(u)), 'business-only ZIPs are never drawn');
  const counts = new Map<string, number>();
  for (const u of a.sequence) counts.set(u, (counts.get(u) ?? 0) + 1);
  assert.equal(a.distinctInSequence, counts.size);
  // Zipf: the most popular query is far more frequent than the median one, and the top 1 % of the
  // universe carries a large share of the requests.
  assert.ok((counts.get(a.universe[0]!) ?? 0) > 200, `rank 1 drawn ${counts.get(a.universe[0]!)} times`);
  const top = a.universe.slice(0, 200).reduce((s, u) => s + (counts.get(u) ?? 0), 0);
  assert.ok(top / a.sequence.length > 0.2 && top / a.sequence.length < 0.6, `top 1 % share ${top / a.sequence.length}`);
});

test('the LRU estimate counts hits only in the measured range, after warming on the requests before it', () => {
  const seq = ['a', 'b', 'a', 'c', 'a', 'b'];
  assert.equal(lruHits(seq, 0, 6, 10), 3, 'unbounded: every repeat hits');
  assert.equal(lruHits(seq, 3, 6, 10), 2, 'the warm-up requests are not counted');
  assert.equal(lruHits(seq, 0, 6, 1), 0, 'one slot: no two neighbours are equal');
  // a b [a] c [a] b | [a] [b] [a] c [a] b with two slots
  assert.equal(lruHits(seq, 0, 12, 2), 6, 'the sequence replays cyclically');
  assert.equal(lruHits(seq, 0, 6, 0), 0);
});
