/**
 * @module `hpd config`: the configuration `hpd serve` would use here, each value with where it came
 * from, secrets masked, so an operator checks a deployment's environment without starting it.
 */
import { serveConfig } from '../config/serve-config.ts';
import { SETTING_KEYS, SETTINGS, type Setting } from '../config/settings.ts';
import { parseCommandArgs } from './args.ts';

export const CONFIG_USAGE = `Usage: hpd config [--json]

Prints every HPD_* variable with the value hpd serve would use and where it came from (default or
environment), after validating them all as hpd serve does (a refused value: one line, exit 2). Secrets
are masked (the password in HPD_REDIS_URL). The variables are described in hpd serve --help.

Options:
  --json   a JSON array of { name, value, source } on stdout`;

export function configCommand(argv: readonly string[]): number {
  const { values } = parseCommandArgs('config', argv, { json: { type: 'boolean' } });
  const config = serveConfig(process.env);
  const rows = SETTING_KEYS.map((key) => {
    const s = SETTINGS[key] as Setting<unknown>;
    const text = config.effective[key];
    const value = s.secret === true && text !== '' ? '****' : s.mask !== undefined ? s.mask(text) : text;
    return { name: s.name, value, source: config.sources[key] };
  });
  if (values.json === true) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  const width = Math.max(...rows.map((r) => r.name.length));
  for (const r of rows) process.stdout.write(`${r.name.padEnd(width)}  ${r.value === '' ? '(unset)' : r.value}  (${r.source})\n`);
  return 0;
}
