/**
 * @module The `hpd` command line. Every failure ends with one readable line on stderr and a non-zero
 * exit code: 2 for a usage mistake or a refused HPD_* value, 1 for anything else. Stack traces are printed
 * only with HPD_DEBUG=1.
 * Commands are loaded on demand, so `hpd keys` does not load the HTTP servers or the OAuth provider.
 */
import { debugEnabled } from '../config/settings.ts';
import { PACKAGE_VERSION } from '../package-version.ts';
import { suggestion } from '../operations/suggest.ts';
import { describeFailure } from './one-line-errors.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `Usage: hpd <command> [options]

Commands:
  build    compile a plan year's official CMS files into a build (hpd build --help)
  serve    serve REST, MCP and the OAuth server (hpd serve --help lists every HPD_* variable)
  verify   check builds against the sizes and SHA-256 sums in their manifests (hpd verify --help)
  builds   list builds, switch current, prune old ones, diff two builds (hpd builds --help)
  reload   make the running server adopt newly published builds now (hpd reload --help)
  sources  write data/sources/YEAR.json for a new plan year, pin its checksums (hpd sources --help)
  keys     create, list and revoke API keys (hpd keys --help)
  users    set and list users' tiers (hpd users --help)
  state    verify and back up the embedded state files (hpd state --help)
  redis    start, adopt and inspect the shared Redis dataset's epoch (hpd redis --help)
  config   print the effective configuration (HPD_* variables), secrets masked (hpd config --help)
  version  print the version (also hpd --version)
`;

const COMMANDS = ['build', 'serve', 'verify', 'builds', 'reload', 'keys', 'users', 'state', 'redis', 'config', 'version', 'help'];

function usage(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    process.stdout.write(`hpd ${PACKAGE_VERSION}\n`);
    return 0;
  }
  const help = rest.includes('--help') || rest.includes('-h');
  if (command === 'build') {
    const { BUILD_USAGE, buildCommand } = await import('./build-command.ts');
    if (help) return usage(BUILD_USAGE);
    return buildCommand(rest);
  }
  if (command === 'serve') {
    const { SERVE_USAGE, serveCommand } = await import('./serve-command.ts');
    if (help) return usage(SERVE_USAGE);
    return serveCommand(rest);
  }
  if (command === 'verify') {
    const { VERIFY_USAGE, verifyCommand } = await import('./verify-command.ts');
    if (help) return usage(VERIFY_USAGE);
    return verifyCommand(rest);
  }
  if (command === 'builds') {
    const { BUILDS_USAGE, buildsCommand } = await import('./builds-command.ts');
    if (help) return usage(BUILDS_USAGE);
    return buildsCommand(rest);
  }
  if (command === 'reload') {
    const { RELOAD_USAGE, reloadCommand } = await import('./reload-command.ts');
    if (help) return usage(RELOAD_USAGE);
    return reloadCommand(rest);
  }
  if (command === 'sources') {
    const { SOURCES_USAGE, sourcesCommand } = await import('./sources-command.ts');
    if (help) return usage(SOURCES_USAGE);
    return sourcesCommand(rest);
  }
  if (command === 'keys') return (await import('./keys-command.ts')).keysCommand(rest);
  if (command === 'users') return (await import('./users-command.ts')).usersCommand(rest);
  if (command === 'state') return (await import('./state-command.ts')).stateCommand(rest);
  if (command === 'redis') return (await import('./redis-command.ts')).redisCommand(rest);
  if (command === 'config') {
    const { CONFIG_USAGE, configCommand } = await import('./config-command.ts');
    if (help) return usage(CONFIG_USAGE);
    return configCommand(rest);
  }
  const known = command.startsWith('-') ? ['--help', '--version'] : COMMANDS;
  const near = suggestion(command, known);
  throw new UsageError(
    `unknown ${command.startsWith('-') ? 'option' : 'command'} ${command}${near}`,
    near.startsWith(' (did you mean') ? null : 'see hpd --help',
  );
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (debugEnabled()) console.error(err);
  const failure = describeFailure(err);
  process.stderr.write(`${failure.line}\n`);
  process.exitCode = failure.exit;
}
