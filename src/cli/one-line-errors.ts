/**
 * @module The command line's catalogue of expected failures: the error classes `hpd` prints as one
 * line (`hpd: <message>`) with their exit code. Anything else is a bug and is printed as
 * `hpd: unexpected error: …` (InvariantError says so on purpose). docs/errors.md lists these classes;
 * test/docs/catalogues.test.ts checks both ways.
 */
import { FatalBuildError } from '../../build/read/diagnostics.ts';
import { ConfigError } from '../config/config-error.ts';
import { BuildIntegrityError } from '../engine/build-integrity.ts';
import { RulesValidationError } from '../engine/rules.ts';
import { ListenError } from '../http/listen-error.ts';
import { UnsupportedRuntimeError } from '../http/unsupported-runtime-error.ts';
import { RedisUnreachableError } from '../policy/redis-unreachable-error.ts';
import { StateError } from '../policy/state-error.ts';
import { CliError, UsageError } from './usage-error.ts';

interface OneLineError {
  readonly type: abstract new (...args: never[]) => Error;
  /** 2: the command line or a setting must change; 1: anything else. */
  readonly exit: 1 | 2;
}

export const ONE_LINE_ERRORS: readonly OneLineError[] = [
  { type: UsageError, exit: 2 },
  { type: ConfigError, exit: 2 },
  { type: CliError, exit: 1 },
  { type: FatalBuildError, exit: 1 },
  { type: BuildIntegrityError, exit: 1 },
  { type: RulesValidationError, exit: 1 },
  { type: ListenError, exit: 1 },
  { type: UnsupportedRuntimeError, exit: 1 },
  { type: RedisUnreachableError, exit: 1 },
  { type: StateError, exit: 1 },
];

/** The line `hpd` prints for a failure and its exit code. */
export function describeFailure(err: unknown): { line: string; exit: 1 | 2 } {
  for (const { type, exit } of ONE_LINE_ERRORS) {
    if (!(err instanceof type)) continue;
    const hint = err instanceof UsageError && err.hint !== null ? ` (${err.hint})` : '';
    return { line: `hpd: ${err.message}${hint}`, exit };
  }
  const msg = err instanceof Error ? err.message : String(err);
  return { line: `hpd: unexpected error: ${msg.split('\n')[0]} (run with HPD_DEBUG=1 for details)`, exit: 1 };
}
