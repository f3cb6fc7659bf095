/**
 * @module Programmer errors. An `InvariantError` says a rule the code itself guarantees was broken (a
 * misuse of an internal API, a state the callers make impossible): no input file, setting or request
 * can cause it, so it is not in any of the error catalogues (docs/errors.md). Users only ever see it as
 * a bug: `hpd: unexpected error …` from the CLI, `internal-error` (500) from the fronts.
 *
 * Every error a user can cause comes from a catalogue instead: API problems
 * (src/operations/problems.ts), build diagnostics (FatalBuildError with a DIAGNOSTIC_CODES code), or
 * the CLI's one-line errors (the classes src/cli/main.ts prints as one line).
 */
export class InvariantError extends Error {
  override name = 'InvariantError';
}
