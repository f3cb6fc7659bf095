import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fastHash, HashStream } from '../../src/encoding/fast-hash.ts';

describe('fastHash', () => {
  it('keeps its digests: ETags and cursor fingerprints of a build stay valid across versions of the server', () => {
    assert.deepEqual(['', 'searchPlans?age=40', 'Doña Ana 😀', `${'a3f9c0e1b2d4'.repeat(5)}abcd\u0000zip`].map(fastHash), [
      '0ztntfp0p76ayu',
      '1t7gjt2105kjnc',
      '0afn8ot1o6owke',
      '08tf9m206ec751',
    ]);
  });

  it('a stream resumed from the lanes of a prefix digests as the whole text fed at once', () => {
    const prefix = new HashStream().reset();
    prefix.text('a3f9c0e1b2d4');
    prefix.char(0);
    const resumed = new HashStream().resume(prefix.laneA, prefix.laneB);
    resumed.text('zip');
    resumed.number(77_002);
    assert.equal(resumed.digest(), fastHash('a3f9c0e1b2d4\u0000zip77002'));
  });
});
