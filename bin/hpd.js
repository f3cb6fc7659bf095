#!/usr/bin/env node
// Entry point of the `hpd` command. Node 20 cannot run TypeScript by itself, so the sources are loaded
// through tsx's loader (a runtime dependency); the command code itself lives in src/cli/main.ts.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
