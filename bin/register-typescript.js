// `node --import ./bin/register-typescript.js file.ts`: installs the TypeScript hooks for this process.
import { register } from 'node:module';

register('./typescript-hooks.js', import.meta.url);
