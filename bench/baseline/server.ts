/**
 * @module The baseline server process: Hono on `@hono/node-server` over the SQLite database written
 * by `load.ts`. One process, one event loop, like our server.
 *
 * Usage: node --import ./bin/register-typescript.js bench/baseline/server.ts DB_PATH PORT BASE_URL
 * Prints `{"ready":true,"port":N}` on stdout once listening; SIGTERM closes it.
 */
import { serve } from '@hono/node-server';
import Database from 'better-sqlite3';
import { createBaselineApp } from './app.ts';
import { tune } from './schema.ts';

const [dbPath, portText, baseUrl] = process.argv.slice(2);
if (dbPath === undefined || portText === undefined || baseUrl === undefined) {
  process.stderr.write('usage: server.ts DB_PATH PORT BASE_URL\n');
  process.exit(2);
}
const db = new Database(dbPath, { fileMustExist: true });
tune(db);
const quota = Number(process.env.HPD_QUOTA_ENTERPRISE ?? 100_000);
const app = createBaselineApp({ db, baseUrl, limits: { free: quota, pro: quota, enterprise: quota } });
const server = serve({ fetch: app.fetch, port: Number(portText), hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`${JSON.stringify({ ready: true, port: info.port })}\n`);
});
process.once('SIGTERM', () => {
  server.close(() => {
    db.close();
    process.exit(0);
  });
  setTimeout(() => process.exit(0), 2000).unref();
});
