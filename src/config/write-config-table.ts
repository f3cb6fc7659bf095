/** @module `npm run docs:config`: rewrites the configuration table of docs/configuration.md from settings.ts. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './settings.ts';
import { CONFIG_DOC, withTable } from './settings-docs.ts';

const file = join(REPO_ROOT, CONFIG_DOC);
const before = readFileSync(file, 'utf8');
const after = withTable(before);
if (after !== before) writeFileSync(file, after);
process.stdout.write(
  `${after === before ? `${CONFIG_DOC} configuration table already up to date` : `rewrote the configuration table of ${CONFIG_DOC}`}\n`,
);
