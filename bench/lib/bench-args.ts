/**
 * @module The command line of a benchmark script: `--help` prints its options and exits 0 (instead of
 * starting a run of several minutes), and a mistyped option stops it at once with the same one-line
 * did-you-mean as `hpd` (src/cli/args.ts), exit 2, rather than being ignored after the run began.
 */
import { parseCommandArgs, type OptionSpec } from '../../src/cli/args.ts';
import { UsageError } from '../../src/cli/usage-error.ts';

export function benchArgs(
  script: string,
  usage: string,
  options: OptionSpec,
  argv: readonly string[] = process.argv.slice(2),
): Readonly<Record<string, string | boolean | undefined>> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  try {
    return parseCommandArgs(script, argv, options).values;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(
      `${script}: ${err.message.slice(script.length + 2)}${err.hint === null ? '' : ` (see npm run ${script} -- --help)`}\n`,
    );
    process.exit(2);
  }
}
