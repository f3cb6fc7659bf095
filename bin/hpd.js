#!/usr/bin/env node
// Entry point of the `hpd` command. The TypeScript sources are loaded
// through our type-stripping hook (bin/typescript-hooks.js); the command code lives in src/cli/main.ts.

// `hpd serve` runs with V8's memory reducer off. Once a thread goes quiet, the reducer runs two
// mark-compacts on it to give memory back: 20–40 ms each on the main thread, whose heap holds the
// builds for MCP, and on one core that pause is every REST worker's too (p99 of search at 80 % load
// went from 2.96 ms to 19–33 ms with it). The flag only takes effect for an isolate
// created after it is set, the main one included, so the process replaces itself (same pid, same
// stdio) with the flag on its command line. A serve process holds its memory for its lifetime anyway,
// and settles its heap once it has loaded (src/http/settle-heap.ts).
const REDUCER_OFF = '--no-memory-reducer';
if (process.argv[2] === 'serve' && !process.execArgv.includes(REDUCER_OFF) && typeof process.execve === 'function') {
  process.execve(process.execPath, [process.execPath, REDUCER_OFF, ...process.execArgv, ...process.argv.slice(1)], process.env);
}

await import('./register-typescript.js');
await import('../src/cli/main.ts');
