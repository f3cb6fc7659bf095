/**
 * @module The `hpd` command line. Every failure ends with one readable line on stderr and a non-zero
 * exit code: 2 for a usage mistake, 1 for anything else. Stack traces are printed only with HPD_DEBUG=1.
 */
import { FatalBuildError } from '../../build/read/diagnostics.ts';
import { BUILD_USAGE, buildCommand } from './build-command.ts';
import { keysCommand } from './keys-command.ts';
import { SERVE_USAGE, serveCommand } from './serve-command.ts';
import { usersCommand } from './users-command.ts';
import { CliError, UsageError } from './usage-error.ts';

const USAGE = `Usage: hpd <command> [options]

Commands:
  build    compile a plan year's official CMS files into a build (hpd build --help)
  serve    serve the REST API (builds the default PY2025 dataset first if needed)
  keys     create, list and revoke API keys (hpd keys --help)
  users    set and list users' tiers (hpd users --help)
`;

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === 'build') {
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(`${BUILD_USAGE}\n`);
      return 0;
    }
    return buildCommand(rest);
  }
  if (command === 'serve') {
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(`${SERVE_USAGE}\n`);
      return 0;
    }
    return serveCommand(rest);
  }
  if (command === 'keys') return keysCommand(rest);
  if (command === 'users') return usersCommand(rest);
  throw new UsageError(`unknown command "${command}"`);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (process.env.HPD_DEBUG === '1') console.error(err);
  if (err instanceof UsageError) {
    process.stderr.write(`hpd: ${err.message} (see hpd --help)\n`);
    process.exitCode = 2;
  } else if (err instanceof FatalBuildError || err instanceof CliError) {
    process.stderr.write(`hpd: ${err.message}\n`);
    process.exitCode = 1;
  } else {
    const msg = err instanceof Error ? err.message : String(err);
    process.stderr.write(`hpd: unexpected error: ${msg.split('\n')[0]} (run with HPD_DEBUG=1 for details)\n`);
    process.exitCode = 1;
  }
}
