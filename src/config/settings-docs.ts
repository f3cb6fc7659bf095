/**
 * @module The documentation derived from settings.ts: the environment part of `hpd serve --help` and
 * the configuration table of docs/configuration.md between its markers (rewritten by `npm run docs:config`).
 */
import { BENCH_VARIABLES, SETTING_KEYS, SETTINGS, type Setting } from './settings.ts';
import { InvariantError } from '../invariant.ts';

export const TABLE_START = '<!-- hpd-config-table:start -->';
export const TABLE_END = '<!-- hpd-config-table:end -->';

const WIDTH = 104;

/** Words wrapped to WIDTH, continuation lines indented by `indent` spaces. */
function wrap(text: string, first: string, indent: number): string {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(' ')) {
    if (line.length + 1 + word.length > WIDTH && line.trim() !== '') {
      lines.push(line);
      line = ' '.repeat(indent) + word;
    } else {
      line = line.length === 0 || line.endsWith(' ') ? line + word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

const all = (): Setting<unknown>[] => SETTING_KEYS.map((k) => SETTINGS[k] as Setting<unknown>);

/** The "Environment:" part of `hpd serve --help`: one entry per variable, with its default. */
export function environmentUsage(): string {
  const entries = all().map((s) =>
    wrap(`${s.description} (default: ${s.defaultText})${s.scope === 'all' ? '; every command' : ''}`, `  ${s.name.padEnd(26)}`, 28),
  );
  return `Environment (an empty value counts as unset; hpd config prints the effective values):\n${entries.join('\n')}`;
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

/** The page of the documentation that holds the configuration table, from the repository's root. */
export const CONFIG_DOC = 'docs/configuration.md';

/** The configuration table, markers included. */
export function markdownTable(): string {
  const rows = all().map(
    (s) =>
      `| \`${s.name}\` | ${cell(s.defaultText === 'none' ? 'unset' : /\s/.test(s.defaultText) ? s.defaultText : `\`${s.defaultText}\``)} | ${cell(s.description)}${s.scope === 'all' ? ' (every command)' : ''} | ${cell(s.expected)} |`,
  );
  const bench = BENCH_VARIABLES.map((b) => `\`${b.name}\` (${b.defaultText}): ${b.description}`).join('; ');
  return [
    TABLE_START,
    '<!-- generated from src/config/settings.ts by npm run docs:config; edit there -->',
    '',
    '| Variable | Default | What it sets | Accepted values |',
    '|---|---|---|---|',
    ...rows,
    '',
    `An empty value counts as unset; a refused value stops \`hpd serve\` with one line naming the variable (exit 2). Benchmarks only: ${bench}.`,
    TABLE_END,
  ].join('\n');
}

/** `page` with the text between the markers replaced; throws when the markers are missing. */
export function withTable(page: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new InvariantError(`${CONFIG_DOC} has no ${TABLE_START} … ${TABLE_END} block`);
  return page.slice(0, start) + markdownTable() + page.slice(end + TABLE_END.length);
}
