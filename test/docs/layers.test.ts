/**
 * The layers of docs/architecture.md hold in the imports: every import of a .ts file under src/ and
 * build/ (static, `import type`, `export … from`, dynamic `import()`) goes down the table below, and no
 * file reaches itself again through its imports. A type-only or dynamic import counts: either still ties
 * the two files' meaning together, and a dynamic import that closes a loop only hides it from the loader.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsFiles } from '../helpers/repo-files.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * What each part may import: a folder of src/ (`src/http` for everything under it), a file at the top of
 * src/, or the compiler (`build`). The one table of the layers; a new folder of src/ needs a row here.
 * Bottom up: the two leaves (programmer errors, the package version) and the encoders; the engine and
 * the compiler over it; policy, then the operations over engine and policy; observability counts them;
 * the fronts (http, then mcp and the authorization server on http's node:http listener); config declares
 * the settings of them all; cli starts everything.
 */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  'src/invariant.ts': [],
  'src/package-version.ts': [],
  'src/encoding': [],
  'src/engine': ['src/invariant.ts'],
  build: ['src/engine', 'src/invariant.ts'],
  'src/policy': ['src/invariant.ts'],
  'src/operations': ['src/engine', 'src/encoding', 'src/policy', 'src/invariant.ts'],
  'src/observability': ['src/operations', 'src/policy', 'src/invariant.ts'],
  'src/http': [
    'src/engine',
    'src/encoding',
    'src/operations',
    'src/policy',
    'src/observability',
    'src/invariant.ts',
    'src/package-version.ts',
  ],
  'src/mcp': ['src/http', 'src/operations', 'src/policy', 'src/observability', 'src/invariant.ts'],
  'src/auth-server': ['src/http', 'src/policy', 'src/observability', 'src/invariant.ts'],
  'src/config': ['src/auth-server', 'src/http', 'src/policy', 'src/observability', 'src/invariant.ts'],
  'src/cli': [
    'build',
    'src/config',
    'src/auth-server',
    'src/mcp',
    'src/http',
    'src/observability',
    'src/operations',
    'src/policy',
    'src/engine',
    'src/invariant.ts',
    'src/package-version.ts',
  ],
};

type Kind = 'import' | 'import type' | 'import()';

interface Edge {
  readonly to: string;
  readonly kind: Kind;
}

/**
 * `text` with its comments blanked (strings, template literals and regular expressions kept), so that an
 * import named in a comment is not read as one and a `//` in a string or a quote in a regular expression
 * does not hide one.
 */
function withoutComments(text: string): string {
  let out = '';
  let i = 0;
  /** The last significant character outside comments: whether a `/` starts a regular expression. */
  let last = '';
  /** Brace depth, and the depths at which a template literal's `${` was opened (its `}` resumes it). */
  let depth = 0;
  const substitutions: number[] = [];
  /** Copies a template literal's text from `i` (just past its opening character) to its end or next `${`. */
  const templateText = (start: number): void => {
    while (i < text.length && text[i] !== '`') {
      if (text[i] === '\\') i += 2;
      else if (text[i] === '$' && text[i + 1] === '{') {
        i += 2;
        out += text.slice(start, i);
        substitutions.push(++depth);
        return;
      } else i++;
    }
    i++;
    out += text.slice(start, i);
  };
  while (i < text.length) {
    const c = text[i]!;
    const start = i;
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
      out += text.slice(start, i).replace(/[^\n]/g, ' ');
      continue;
    }
    i++;
    if (c === "'" || c === '"') {
      while (i < text.length && text[i] !== c && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
      i++;
      out += text.slice(start, i);
    } else if (c === '`' || (c === '}' && substitutions.at(-1) === depth)) {
      if (c === '}') {
        substitutions.pop();
        depth--;
      }
      templateText(start);
    } else if (c === '/' && (last === '' || '(,=:[!&|?{};+-*%<>~^'.includes(last) || /\b(return|typeof|case|in|of)$/.test(out.trimEnd()))) {
      let inClass = false;
      while (i < text.length && text[i] !== '\n' && (inClass || text[i] !== '/')) {
        if (text[i] === '\\') i++;
        else if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        i++;
      }
      i++;
      out += text.slice(start, i);
    } else {
      if (c === '{') depth++;
      else if (c === '}') depth--;
      out += c;
    }
    // After a string, template or regular expression, as after a name, a `/` divides.
    if (!/\s/.test(c)) last = i - start > 1 ? 'x' : c;
  }
  return out;
}

/** The relative imports of `file` (its text: `source`), resolved to repository paths. */
function importsOf(file: string, source = readFileSync(join(root, file), 'utf8')): Edge[] {
  const text = withoutComments(source);
  const edges: Edge[] = [];
  const add = (spec: string, kind: Kind): void => {
    if (!spec.startsWith('.')) return;
    edges.push({ to: normalize(join(dirname(file), spec)).replaceAll('\\', '/'), kind });
  };
  for (const m of text.matchAll(/(?<![\w$.])(import|export)(\s+type\b)?[^'";]*?\bfrom\s*(['"])([^'"\n]+)\3/g)) {
    add(m[4]!, m[2] === undefined ? 'import' : 'import type');
  }
  for (const m of text.matchAll(/(?<![\w$.])import\s*(['"])([^'"\n]+)\1/g)) add(m[2]!, 'import');
  for (const m of text.matchAll(/(?<![\w$.])import\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g)) add(m[2]!, 'import()');
  return edges;
}

/** The part of the table a file belongs to. */
function partOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'build') return 'build';
  if (parts[0] === 'src') return parts.length === 2 ? file : `src/${parts[1]}`;
  return file;
}

const files = [...tsFiles('src'), ...tsFiles('build')].sort();
const graph = new Map(files.map((f) => [f, importsOf(f)]));

test('the import reader finds every form of import, and none in comments', () => {
  const sample = [
    "import { a } from './a.ts';",
    "import type { B } from './b.ts';",
    "export { c } from './c.ts';",
    "export type { D } from './d.ts';",
    "import './e.ts';",
    "const f = await import('./f.ts');",
    'import {',
    '  g,',
    '  type G,',
    "} from '../x/g.ts';",
    "// import { h } from './h.ts';",
    "/* const i = import('./i.ts'); */",
    "const j = 'http://host/'; import { k } from './k.ts';",
    "const re = /[\"'`]/; import { l } from './l.ts';",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text holding a template literal, on purpose
    "const t = `${'`'}/*`; import { m } from './m.ts';",
  ].join('\n');
  assert.deepEqual(
    importsOf('src/x/y.ts', sample)
      .map((e) => `${e.kind} ${e.to}`)
      .sort(),
    [
      'import src/x/a.ts',
      'import src/x/c.ts',
      'import src/x/e.ts',
      'import src/x/g.ts',
      'import src/x/k.ts',
      'import src/x/l.ts',
      'import src/x/m.ts',
      'import type src/x/b.ts',
      'import type src/x/d.ts',
      'import() src/x/f.ts',
    ],
  );
  // So that a reader finding nothing in the real sources cannot pass the tests below.
  assert.ok([...graph.values()].reduce((n, edges) => n + edges.length, 0) > files.length, 'fewer imports than files');
});

test('every file imported from src/ and build/ exists in src/ or build/', () => {
  const wrong: string[] = [];
  for (const [file, edges] of graph)
    for (const e of edges)
      if (!graph.has(e.to))
        wrong.push(`${file} imports ${e.to}, ${existsSync(join(root, e.to)) ? 'outside src/ and build/' : 'which does not exist'}`);
  assert.deepEqual(wrong, []);
});

test('every folder and file at the top of src/, and build/, has a row in the table of layers', () => {
  const parts = new Set(files.map(partOf));
  for (const p of parts) assert.ok(p in ALLOWED, `${p} is not in the table of layers of test/docs/layers.test.ts`);
  for (const p of Object.keys(ALLOWED)) assert.ok(parts.has(p), `the table of layers names ${p}, which has no .ts file`);
});

test('the table of layers has no cycle: it is an order', () => {
  const visiting = new Set<string>();
  const done = new Set<string>();
  const visit = (p: string, path: string[]): void => {
    if (done.has(p)) return;
    assert.ok(!visiting.has(p), `the table lets ${[...path.slice(path.indexOf(p)), p].join(' → ')}`);
    visiting.add(p);
    for (const q of ALLOWED[p] ?? []) visit(q, [...path, p]);
    visiting.delete(p);
    done.add(p);
  };
  for (const p of Object.keys(ALLOWED)) visit(p, []);
});

test('every import goes down the table of layers', () => {
  const wrong: string[] = [];
  for (const [file, edges] of graph) {
    const from = partOf(file);
    for (const e of edges) {
      const to = partOf(e.to);
      if (to !== from && !(ALLOWED[from] ?? []).includes(to))
        wrong.push(`${file} imports ${e.to} (${e.kind}): ${from} may not import ${to}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('no file reaches itself through its imports (static, type-only or dynamic)', () => {
  // Tarjan's strongly connected components; each component of more than one file (or a file importing
  // itself) is reported as one cycle through it.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const strong = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const { to } of graph.get(v) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        strong(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).some((e) => e.to === v)) components.push(component);
    }
  };
  for (const f of files) if (!index.has(f)) strong(f);
  const cycles = components.map((c) => cycleThrough(new Set(c)));
  assert.deepEqual(cycles, [], `import cycles:\n  ${cycles.join('\n  ')}`);
});

/** A shortest cycle through the first file of a strongly connected component, written as its path. */
function cycleThrough(component: ReadonlySet<string>): string {
  const start = [...component].sort()[0]!;
  const came = new Map<string, { from: string; kind: Kind }>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const e of graph.get(v) ?? []) {
      if (!component.has(e.to) || came.has(e.to)) continue;
      came.set(e.to, { from: v, kind: e.kind });
      if (e.to === start) i = queue.length;
      else queue.push(e.to);
    }
  }
  const steps: string[] = [];
  let at = start;
  do {
    const c = came.get(at)!;
    steps.unshift(`${c.kind === 'import' ? '→' : `→ (${c.kind})`} ${at}`);
    at = c.from;
  } while (at !== start);
  return `${start} ${steps.join(' ')}`;
}
