/** @module `hpd sources init --year YEAR [--pin]`: write or pin `data/sources/<year>.json`. */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initSources, pinSources } from '../../build/sources-init.ts';
import { loadSourcesFile } from '../../build/sources.ts';
import { cacheRoot, REPO_ROOT } from './paths.ts';
import { planYearArg } from './plan-year-arg.ts';
import { CliError, UsageError } from './usage-error.ts';

export const SOURCES_USAGE = `Usage: hpd sources init --year YEAR [--sbe ST,ST…] [--no-federal] [--pin] [--force]

Writes data/sources/YEAR.json for a new plan year: the official CMS PUF URLs of that year
(download.cms.gov/marketplace-puf/YEAR/...), checksums null until the first download, and the
geography, rating-area and benchmark inputs of the newest existing sources file.

Options:
  --year YEAR   the plan year
  --sbe ST,…    also read the CMS state-based-exchange bundle (Plans, Rates, Service Areas) of these
                states; they have no URL pattern: add each file's mirror path, then --pin
  --no-federal  no federal Exchange PUFs this year (every state with plans from an --sbe bundle)
  --pin         instead, record the sha256 of every input already downloaded into the cache
                (data/cache/YEAR/, or $HPD_CACHE_DIR/YEAR/, filled by hpd build), and of every mirror
                file present without one, in data/sources/YEAR.json
  --force       overwrite an existing data/sources/YEAR.json (init only)
  --dir DIR     sources directory (default data/sources)`;

export async function sourcesCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'init')
    throw new UsageError(sub === undefined ? 'hpd sources needs a subcommand: init' : `unknown subcommand "${sub}" of hpd sources`);
  const { values } = parseArgs({
    args: [...rest],
    options: {
      year: { type: 'string' },
      pin: { type: 'boolean' },
      force: { type: 'boolean' },
      dir: { type: 'string' },
      sbe: { type: 'string' },
      'no-federal': { type: 'boolean' },
    },
    strict: true,
  });
  const year = planYearArg(values.year, '--year');
  const dir = values.dir ?? join(REPO_ROOT, 'data', 'sources');
  const file = join(dir, `${year}.json`);
  if (values.pin === true) {
    if (!existsSync(file)) throw new CliError(`no ${file}: run hpd sources init --year ${year} first`);
    const { sources, pinned } = await pinSources(loadSourcesFile(file), cacheRoot(env), REPO_ROOT).catch((err: unknown) => {
      throw new CliError(err instanceof Error ? err.message : String(err));
    });
    writeFileSync(file, `${JSON.stringify(sources, null, 2)}\n`);
    process.stdout.write(pinned.length === 0 ? `nothing new to pin in ${file}\n` : `pinned ${pinned.join(', ')} in ${file}\n`);
    return 0;
  }
  if (existsSync(file) && values.force !== true) throw new CliError(`${file} exists (use --force to overwrite, --pin to record checksums)`);
  const years = readdirSync(dir)
    .map((f) => /^(\d{4})\.json$/.exec(f)?.[1])
    .filter((y): y is string => y !== undefined)
    .map(Number)
    .filter((y) => y !== year)
    .sort((a, b) => b - a);
  if (years.length === 0) throw new CliError(`no earlier sources file in ${dir} to carry the geography inputs from`);
  const sbeStates = values.sbe === undefined ? [] : values.sbe.split(',').map((s) => s.trim().toUpperCase());
  const badState = sbeStates.find((s) => !/^[A-Z]{2}$/.test(s));
  if (badState !== undefined) throw new UsageError(`--sbe takes two-letter state codes separated by commas, got "${badState}"`);
  if (values['no-federal'] === true && sbeStates.length === 0)
    throw new UsageError('--no-federal needs --sbe: a year needs a source of plans');
  const init = initSources(year, loadSourcesFile(join(dir, `${years[0]}.json`)), { sbeStates, federal: values['no-federal'] !== true });
  writeFileSync(file, `${JSON.stringify(init, null, 2)}\n`);
  process.stdout.write(
    `wrote ${file} (from the CMS URL patterns and ${years[0]}.json); after the first download run hpd sources init --year ${year} --pin\n`,
  );
  return 0;
}
