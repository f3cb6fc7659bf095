/**
 * @module How a Redis command failed: because Redis is unreachable, stalled, read-only or between
 * primaries (a failover), or because of the command itself. The first kind is what the fronts answer
 * with 503 and Retry-After (the same request works once Redis is back), never 500. Its own module, free
 * of the Redis client, so the fronts of an instance on the embedded store never load it.
 */
import { RedisUnreachableError } from './redis-unreachable-error.ts';

/** Whether a command's failure is ioredis's command timeout. */
export function isCommandTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === 'Command timed out';
}

/** Whether a reply says the server is a replica now (it was demoted, or its address leads to one). */
export function isReadOnlyReply(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('READONLY');
}

/** Replies of a server that cannot take the command now: loading its dataset, no primary, too few replicas. */
const NOT_NOW = /^(LOADING|MASTERDOWN|NOREPLICAS|TRYAGAIN|CLUSTERDOWN)\b/;
/** ioredis's failures while it has no usable connection, and the socket errors it passes on. */
const NO_CONNECTION =
  /^Stream isn't writeable|^Connection is closed\.$|\b(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND)\b/;

/** Whether a command failed because Redis cannot serve it now rather than because of the command. */
export function isRedisUnavailable(err: unknown): boolean {
  if (err instanceof RedisUnreachableError) return true;
  if (!(err instanceof Error)) return false;
  return (
    isCommandTimeout(err) ||
    isReadOnlyReply(err) ||
    NOT_NOW.test(err.message) ||
    err.name === 'MaxRetriesPerRequestError' ||
    NO_CONNECTION.test(err.message)
  );
}
