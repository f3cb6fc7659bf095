#!/usr/bin/env node
// Entry point of the `hpd` command. The TypeScript sources are loaded
// through our esbuild-based hooks (bin/typescript-hooks.js); the command code lives in src/cli/main.ts.
import './register-typescript.js';

await import('../src/cli/main.ts');
