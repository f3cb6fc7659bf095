/**
 * @module The environment of /metrics and the logs, read once at start: HPD_METRICS_PORT (unset: no
 * metrics listener), HPD_METRICS_HOST (127.0.0.1), HPD_ACCESS_LOG (off | full | rate), HPD_LOG_LEVEL
 * (info; silent turns the JSON logs off). A bad value is an error naming the variable.
 */
import { parseAccessLog, type AccessLogRate } from './access-log.ts';
import { parseLogLevel, type LogLevel } from './logger.ts';

export interface ObservabilityConfig {
  /** Undefined: /metrics is not served (and nothing is counted). */
  readonly metricsPort?: number;
  readonly metricsHost: string;
  readonly accessLog: AccessLogRate;
  readonly logLevel: LogLevel;
}

export const DEFAULT_METRICS_HOST = '127.0.0.1';

/** Throws a RangeError naming the variable and what it expects. */
export function observabilityConfig(env: NodeJS.ProcessEnv): ObservabilityConfig {
  const rawPort = env.HPD_METRICS_PORT;
  let metricsPort: number | undefined;
  if (rawPort !== undefined && rawPort !== '') {
    metricsPort = Number(rawPort);
    if (!/^\d+$/.test(rawPort) || metricsPort > 65535) throw new RangeError(`HPD_METRICS_PORT must be a port number (0 to 65535; unset: no metrics listener), got "${rawPort}"`);
  }
  return {
    metricsPort,
    metricsHost: env.HPD_METRICS_HOST === undefined || env.HPD_METRICS_HOST === '' ? DEFAULT_METRICS_HOST : env.HPD_METRICS_HOST,
    accessLog: parseAccessLog(env.HPD_ACCESS_LOG),
    logLevel: parseLogLevel(env.HPD_LOG_LEVEL),
  };
}
