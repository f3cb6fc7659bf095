/**
 * Every relative link of the README and the guides under docs/ leads to a file of the repository, and
 * every link to a heading of a page finds that heading: the documentation is read by following links.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pages = ['README.md', 'deploy/README.md', 'bench/results/history.md', ...readdirSync(join(root, 'docs')).map((f) => `docs/${f}`)];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

const anchorsOf = (page: string): Set<string> =>
  new Set(
    readFileSync(join(root, page), 'utf8')
      .replace(/```[\s\S]*?```/g, '')
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => anchorOf(l.replace(/^#+ /, ''))),
  );

for (const page of pages) {
  test(`${page}: every relative link and heading anchor resolves`, () => {
    const text = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, anchor] = target!.split('#') as [string, string?];
      const file = path === '' ? page : normalize(join(dirname(page), path));
      assert.ok(existsSync(join(root, file)), `${page} links ${target}: no such file`);
      if (anchor !== undefined && file.endsWith('.md'))
        assert.ok(anchorsOf(file).has(anchor), `${page} links ${target}: ${file} has no such heading`);
    }
  });
}
