/**
 * @module The levels of the JSON logs (pino's), in a module of their own so the configuration can
 * validate HPD_LOG_LEVEL without loading the logger.
 */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
