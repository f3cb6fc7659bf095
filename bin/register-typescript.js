// `node --import ./bin/register-typescript.js file.ts`: installs the TypeScript hook for this thread
// (a worker thread that runs our sources passes the same --import).
import { registerHooks } from 'node:module';
import { load } from './typescript-hooks.js';

registerHooks({ load });
