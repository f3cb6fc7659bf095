/** @module The package version: `hpd --version`, the MCP server's version and the OpenAPI document's. */
import { readFileSync } from 'node:fs';

export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
