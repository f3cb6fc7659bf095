import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { budgetText, searchBudget } from '../../bench/lib/search-budget.ts';

describe('search budget', () => {
  const ceiling = { userUs: 6, sysUs: 7 };

  it('splits ours into the pipeline over the ceiling and the search, and says what the target leaves', () => {
    const b = searchBudget(ceiling, { userUs: 10, sysUs: 8 }, { userUs: 30, sysUs: 10 }, 0.5);
    assert.deepEqual([b.pipelineUs, b.searchUs, b.allowedUs, b.searchAllowedUs], [5, 22, 26, 8]);
    const text = budgetText(b, 0.991).join('\n');
    assert.match(text, /^\| ours, every answer from the search cache \(99\.1 % hits\): the pipeline alone \| 10 \| 8 \| 18 \| 1\.38× \|$/m);
    assert.match(text, /^\| ours, every search computed \| 30 \| 10 \| 40 \| 3\.08× \|$/m);
    assert.match(
      text,
      /leaves the search and its page 8 µs, against 22 µs measured: the search and its page would have to cost 0\.364× what they do\.$/m,
    );
  });

  it('says when the computed runs measured no more than the cached ones instead of a ratio', () => {
    const b = searchBudget(ceiling, { userUs: 10, sysUs: 8 }, { userUs: 9, sysUs: 8 }, 0.5);
    const text = budgetText(b, 0.99).join('\n');
    assert.match(text, /^- The search and its page: -1 µs a request\.$/m);
    assert.match(
      text,
      /leaves the search and its page 8 µs, and the computed runs measured no more than the cached ones \(runs too short or too noisy to split\)\.$/m,
    );
  });

  it('says when the pipeline alone is over what the target allows', () => {
    const b = searchBudget(ceiling, { userUs: 20, sysUs: 10 }, { userUs: 30, sysUs: 10 }, 0.5);
    assert.ok(b.searchAllowedUs < 0);
    const text = budgetText(b, null).join('\n');
    assert.match(text, /search cache \(hit rate not read\)/);
    assert.match(text, /leaves the search and its page nothing: the pipeline alone costs more than the 26 µs the target allows\.$/m);
  });
});
