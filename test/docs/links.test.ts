/**
 * Every relative link of the README and the guides under docs/ leads to a file of the repository, and
 * every link to a heading of a page finds that heading: the documentation is read by following links.
 * The same holds for the pages and headings code comments cite (`docs/compatibility.md#tiers`), and no
 * file cites the compatibility rules by a document outside the repository, which a reader cannot open.
 */
import { spawnSync } from 'node:child_process';
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

/** Files of the repository: tracked, or new and not ignored. */
function repositoryFiles(): string[] {
  const git = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' });
  assert.equal(git.status, 0, `git ls-files failed: ${git.stderr}`);
  return git.stdout.split('\0').filter((f) => f !== '' && existsSync(join(root, f)));
}

/** A page and heading cited in code or text: `docs/compatibility.md#request-processing-order`. */
const CITED_ANCHOR = /(?<![\w./-])(docs\/[a-z0-9-]+\.md)#([a-z0-9_-]+)/g;

test('every docs/<page>.md#<heading> cited in a file of the repository (code comments above all) finds its heading', () => {
  const missing: string[] = [];
  let citations = 0;
  for (const file of repositoryFiles()) {
    for (const [, page, anchor] of readFileSync(join(root, file), 'utf8').matchAll(CITED_ANCHOR)) {
      citations++;
      if (!existsSync(join(root, page!))) missing.push(`${file} cites ${page}#${anchor}: no such page`);
      else if (!anchorsOf(page!).has(anchor!)) missing.push(`${file} cites ${page}#${anchor}: ${page} has no such heading`);
    }
  }
  assert.deepEqual(missing, []);
  assert.ok(citations > 0, 'no citation found: the pattern no longer matches how comments cite');
});

/**
 * Citations of the compatibility rules by the shared contract file outside the repository (its name,
 * and "contract" followed by a section number), which docs/compatibility.md replaces. Written so that
 * this file does not match them.
 */
const OUTSIDE_CONTRACT = [/(?<!open)api[-]contract/, /contract \u00a7/];

/** Files that may still cite it, each with why; an entry whose file no longer does fails, to be removed. */
const STILL_CITING: Readonly<Record<string, string>> = {
  'data/geo/geography.json': "its text is part of every build's hash, so its notes change with the next geography change",
};

test('no file cites the compatibility rules by the contract file outside the repository', () => {
  const citing: string[] = [];
  for (const file of repositoryFiles()) {
    const text = readFileSync(join(root, file), 'utf8');
    const cites = OUTSIDE_CONTRACT.some((p) => p.test(text));
    if (STILL_CITING[file] !== undefined) assert.ok(cites, `${file} no longer cites the contract file: remove it from STILL_CITING`);
    else if (cites) citing.push(file);
  }
  assert.deepEqual(citing, [], 'cite docs/compatibility.md#<heading> instead');
});
