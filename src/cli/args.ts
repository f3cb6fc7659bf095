/**
 * @module Command-line parsing shared by every `hpd` command: node:util parseArgs, with its errors
 * rewritten as one plain line ("hpd: keys create: unknown option --lable (did you mean --label?)")
 * instead of node's quoted messages that suggest `-- "-bad"`.
 */
import { parseArgs } from 'node:util';
import { suggestion } from '../operations/suggest.ts';
import { UsageError } from './usage-error.ts';

export type OptionSpec = Readonly<Record<string, { readonly type: 'string' | 'boolean' }>>;

export interface ParsedArgs {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * @param command how the error names the command, e.g. `keys create` (main.ts prefixes `hpd: `).
 * @throws UsageError for an unknown option (with the closest known one), a missing or unexpected value,
 *   or a positional argument when `allowPositionals` is false.
 */
export function parseCommandArgs(command: string, args: readonly string[], options: OptionSpec, allowPositionals = false): ParsedArgs {
  // A lenient pass first, for the tokens: they tell which option was unknown or lacked its value.
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  const known = Object.keys(options).map((o) => `--${o}`);
  for (const t of tokens) {
    if (t.kind === 'option') {
      const spec = options[t.name];
      if (spec === undefined) {
        const near = suggestion(`--${t.name}`, known);
        throw new UsageError(
          `${command}: unknown option ${t.rawName}${near}`,
          near.startsWith(' (did you mean') ? null : helpHint(command),
        );
      }
      if (spec.type === 'string' && t.value === undefined)
        throw new UsageError(`${command}: ${t.rawName} needs a value`, helpHint(command));
      if (spec.type === 'string' && t.inlineValue !== true && t.value?.startsWith('-') === true && t.value !== '-') {
        throw new UsageError(`${command}: ${t.rawName} needs a value, got the option ${t.value}`, helpHint(command));
      }
      if (spec.type === 'boolean' && t.inlineValue === true)
        throw new UsageError(`${command}: ${t.rawName} takes no value`, helpHint(command));
    } else if (t.kind === 'positional' && !allowPositionals) {
      throw new UsageError(`${command}: unexpected argument ${t.value}`, helpHint(command));
    }
  }
  try {
    const parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals });
    return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
  } catch (err) {
    // Cases the pass above does not foresee still end as one usage line.
    throw new UsageError(`${command}: ${(err as Error).message.split('\n')[0]!.replaceAll("'", '')}`, helpHint(command));
  }
}

/** `keys create` → "see hpd keys --help": the help of the top command lists its subcommands' options. */
function helpHint(command: string): string {
  return `see hpd ${command.split(' ')[0]} --help`;
}

/** For subcommands: the unknown name answered with the closest known one. */
export function unknownSubcommand(command: string, given: string, known: readonly string[]): UsageError {
  const near = suggestion(given, known);
  return new UsageError(`${command}: unknown command ${given}${near}`, near.startsWith(' (did you mean') ? null : helpHint(command));
}
