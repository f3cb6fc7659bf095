/** @module The real redis-server the tests start (bench/lib/redis-server.ts, shared with bench:redis). */
export { REDIS_SERVER, startTestRedis, type TestRedis } from '../../bench/lib/redis-server.ts';
