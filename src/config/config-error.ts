/** @module A setting whose value cannot be used: printed as one line naming the variable, exit code 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
