/**
 * @module Redis could not be reached at start, or HPD_REDIS_URL is not a Redis URL: the CLI prints it
 * as one line and exits 1. Its own module so the CLI recognises it without loading the Redis client.
 */
export class RedisUnreachableError extends Error {
  override name = 'RedisUnreachableError';
}
