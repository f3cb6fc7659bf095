/** @module A mistake in the command line: printed as one line with a hint, exit code 2. */
export class UsageError extends Error {
  /** Where to read more, printed in parentheses after the message; null when the message is enough. */
  readonly hint: string | null;

  constructor(message: string, hint: string | null = 'see hpd --help') {
    super(message);
    this.name = 'UsageError';
    this.hint = hint;
  }
}

/** An expected failure of a command (unknown id, missing build): printed as one line, exit code 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}
