/**
 * @module The command line of a benchmark script: `--help` prints its options and exits 0 (instead of
 * starting a run of several minutes), and a mistyped option stops it at once with the same one-line
 * did-you-mean as `hpd` (src/cli/args.ts), exit 2, rather than being ignored after the run began.
 */
import { parseCommandArgs, type OptionSpec, type ParsedArgs } from '../../src/cli/args.ts';
import { UsageError } from '../../src/cli/usage-error.ts';

export function benchArgs(
  script: string,
  usage: string,
  options: OptionSpec,
  argv: readonly string[] = process.argv.slice(2),
): Readonly<Record<string, string | boolean | undefined>> {
  return parse(script, usage, options, argv, false).values;
}

/**
 * {@link benchArgs} for a script that also takes one positional argument from `choices` (a workload),
 * `fallback` when none is given; another value is a usage error like a mistyped option.
 */
export function benchArgsWithChoice<C extends string>(
  script: string,
  usage: string,
  options: OptionSpec,
  choices: readonly C[],
  fallback: C,
  argv: readonly string[] = process.argv.slice(2),
): { readonly values: Readonly<Record<string, string | boolean | undefined>>; readonly choice: C } {
  const { values, positionals } = parse(script, usage, options, argv, true);
  const given = positionals[0];
  if (positionals.length > 1 || (given !== undefined && !(choices as readonly string[]).includes(given))) {
    fail(
      script,
      `${script}: unexpected argument ${positionals.find((p) => !(choices as readonly string[]).includes(p)) ?? positionals[1]} (one of ${choices.join(', ')})`,
      true,
    );
  }
  return { values, choice: (given as C | undefined) ?? fallback };
}

function parse(script: string, usage: string, options: OptionSpec, argv: readonly string[], allowPositionals: boolean): ParsedArgs {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  try {
    return parseCommandArgs(script, argv, options, allowPositionals);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return fail(script, err.message, err.hint !== null);
  }
}

/** A bad option value: one line naming the script and pointing at its --help, exit 2. */
export function benchUsageError(script: string, message: string): never {
  return fail(script, `${script}: ${message}`, true);
}

/** One usage line on stderr, exit 2. `message` starts with the script's name. */
function fail(script: string, message: string, hint: boolean): never {
  process.stderr.write(`${script}: ${message.slice(script.length + 2)}${hint ? ` (see npm run ${script} -- --help)` : ''}\n`);
  process.exit(2);
}
