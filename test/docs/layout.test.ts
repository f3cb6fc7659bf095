/**
 * The layout section of docs/architecture.md matches the tree: a newcomer reads it to find where a thing lives, so a
 * folder added without a line there, or a line left behind for a folder that moved, fails here.
 */
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

/** The layout block: the first fenced block under "## Layout", as entry → its description. */
function layoutEntries(): Map<string, string> {
  const at = readme.indexOf('\n## Layout');
  assert.ok(at >= 0, 'docs/architecture.md has no "## Layout" section');
  const block = /```\n([\s\S]*?)```/.exec(readme.slice(at))?.[1];
  assert.ok(block !== undefined, 'the layout section has no fenced block');
  const entries = new Map<string, string>();
  let current = '';
  for (const line of block.split('\n')) {
    const m = /^(\S+\/)\s+(.*)$/.exec(line);
    if (m !== null) {
      current = m[1]!;
      entries.set(current, m[2]!);
    } else if (current !== '' && line.trim() !== '') {
      entries.set(current, `${entries.get(current)!} ${line.trim()}`);
    }
  }
  return entries;
}

/**
 * Folders of the repository under `path`: what git tracks, not what the documented commands leave in
 * the tree (`npm start` creates var/ and data/builds/, `npm test` data/cache/), which .gitignore keeps out.
 */
const dirs = (path: string): string[] => {
  const names = readdirSync(join(root, path), { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
    .map((d) => d.name);
  if (names.length === 0) return names;
  const ignored = spawnSync('git', ['check-ignore', '--stdin'], {
    cwd: root,
    input: names.map((n) => join(path, n)).join('\n'),
    encoding: 'utf8',
  });
  assert.ok(ignored.status === 0 || ignored.status === 1, `git check-ignore failed: ${ignored.stderr}`);
  const out = new Set(ignored.stdout.split('\n').filter((l) => l !== ''));
  return names.filter((n) => !out.has(join(path, n)));
};

test('every folder of the layout block exists', () => {
  for (const entry of layoutEntries().keys()) assert.ok(existsSync(join(root, entry)), `the layout names ${entry}, which does not exist`);
});

test('every top-level folder and every layer under src/ has a line', () => {
  const entries = layoutEntries();
  for (const d of dirs('.'))
    assert.ok(
      [...entries.keys()].some((e) => e.startsWith(`${d}/`)),
      `${d}/ is missing from the layout of docs/architecture.md`,
    );
  for (const d of dirs('src')) assert.ok(entries.has(`src/${d}/`), `src/${d}/ is missing from the layout of docs/architecture.md`);
});

test("the compiler's line names each of its folders, and the files it names exist", () => {
  const text = layoutEntries().get('build/');
  assert.ok(text !== undefined, 'build/ is missing from the layout of docs/architecture.md');
  for (const d of dirs('build')) assert.match(text, new RegExp(`(^|[\\s(,])${d}/`), `build/${d}/ is not described on the build/ line`);
  for (const [, file] of text.matchAll(/([a-z][a-z0-9-]*\.ts)/g)) {
    const found = existsSync(join(root, 'build', file!)) || dirs('build').some((d) => existsSync(join(root, 'build', d, file!)));
    assert.ok(found, `the build/ line names ${file}, which is not in build/`);
  }
});
