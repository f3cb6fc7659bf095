/**
 * @module `npm run bench:ab -- --against DIR [options]` (`--help` lists them): the proof that a change
 * left the API's answers alone. `hpd serve` from this checkout and from the checkout at DIR (say a
 * worktree of the commit before) serve the same builds with the same keys; a deterministic list of
 * requests drawn from the builds (bench/lib/ab-requests.ts) goes to both, and every status, header
 * (but those that differ between two identical requests: bench/lib/ab-exchange.ts) and body byte is
 * compared. One sha256 per side over every exchange in request order is the figure to quote: equal
 * digests, equal answers. Exit 1 on any difference or unanswered request.
 */
import { createHash, type Hash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRegistry, yearsWithBuilds } from '../src/operations/data-registry.ts';
import {
  caseDifferences,
  digestExchange,
  PER_REQUEST_HEADERS,
  runCase,
  type Difference,
  type Exchange,
  type Side,
} from './lib/ab-exchange.ts';
import { abCases, type AbCase, type KeyName } from './lib/ab-requests.ts';
import { benchArgs, benchUsageError } from './lib/bench-args.ts';
import { benchServeEnv, createKey, spawnHpdServe, type ServerProcess } from './lib/processes.ts';
import { mapLimit } from './lib/verify.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const USAGE = `Usage: npm run bench:ab -- --against DIR [options]

Sends the same deterministic requests to hpd serve from this checkout and from the checkout at DIR (its
node_modules installed) on the same builds with the same keys (free, pro, enterprise), and compares
every status, header and body byte. Prints the requests by status, the first 20 differences and one
sha256 per side; exit 1 on any difference or unanswered request.

Options:
  --against DIR          the other checkout (required; . compares this checkout with itself)
  --builds DIR           builds root holding <year>/current (default: data/builds, PY2025 built when missing)
  --workers N            REST worker threads of both servers (0: the main thread; default: hpd's default)
  --count N              request cases (default 15000; cursor walks and revalidations add requests)
  --seed S               seed of the request list (default 2025)
  --concurrency N        cases in flight (default 16)
  --against-env NAME=V   one more environment variable for the other server only (e.g. a setting to A/B)
  --help                 this text`;
/** Every option takes a value. */
const TEXT = { type: 'string' } as const;
const args = benchArgs('bench:ab', USAGE, {
  against: TEXT,
  builds: TEXT,
  workers: TEXT,
  count: TEXT,
  seed: TEXT,
  concurrency: TEXT,
  'against-env': TEXT,
});

/** One usage line, exit 2, as bench-args does for a mistyped option. */
function usage(message: string): never {
  return benchUsageError('bench:ab', message);
}
const opt = (name: string): string | undefined => {
  const v = args[name];
  return typeof v === 'string' ? v : undefined;
};
const whole = (name: string, fallback: number, min: number): number => {
  const v = opt(name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v) || Number(v) < min) usage(`--${name} must be a whole number ≥ ${min}, got ${v}`);
  return Number(v);
};
const againstOpt = opt('against');
if (againstOpt === undefined) usage('--against DIR is required');
const againstDir = resolve(againstOpt);
if (!existsSync(join(againstDir, 'bin/hpd.js'))) usage(`--against ${againstOpt}: no bin/hpd.js there (not a checkout of this project)`);
const count = whole('count', 15_000, 1);
const seed = whole('seed', 2025, 0);
const concurrency = whole('concurrency', 16, 1);
const workers = opt('workers');
if (workers !== undefined && !/^\d+$/.test(workers)) usage(`--workers must be a whole number, got ${workers}`);
const againstEnv = opt('against-env');
const againstExtra: Record<string, string> = {};
if (againstEnv !== undefined) {
  const m = /^(HPD_[A-Z0-9_]+)=(.*)$/s.exec(againstEnv);
  if (m === null) usage(`--against-env must be HPD_NAME=VALUE, got ${againstEnv}`);
  againstExtra[m[1]!] = m[2]!;
}

/** The origin of every link, the same on both sides whatever their ports. */
const BASE_URL = 'https://api.ab.test';
const log = (line: string): void => void process.stderr.write(`ab: ${line}\n`);

const buildsOpt = opt('builds');
// The load suite's module (the national build when missing) only when it is needed: it loads the whole harness.
const source = buildsOpt !== undefined ? resolve(buildsOpt) : await (await import('./lib/suite.ts')).ensureBuild(2025, undefined, log);
const work = mkdtempSync(join(tmpdir(), 'hpd-ab-'));
const servers: ServerProcess[] = [];
const agents: Agent[] = [];
let stopping: Promise<void> | null = null;
/** Stops both servers and removes the run's files; the same promise for every caller. */
const cleanUp = (): Promise<void> =>
  (stopping ??= (async () => {
    for (const a of agents) a.destroy();
    await Promise.all(servers.map((s) => s.stop(10_000)));
    rmSync(work, { recursive: true, force: true });
  })());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping both servers`);
    void cleanUp().then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

let failed = false;
try {
  // A root of its own, each year's current build pinned: a build published during the run changes neither side.
  const root = join(work, 'builds');
  const years = yearsWithBuilds(source);
  if (years.length === 0) throw new Error(`no build under ${source}`);
  for (const y of years) {
    mkdirSync(join(root, String(y)), { recursive: true });
    symlinkSync(realpathSync(join(source, String(y), 'current')), join(root, String(y), 'current'));
  }

  // The keys are made once, then the state is copied: both sides know the same keys, and each counts
  // its own quota.
  const oursState = join(work, 'state-ours');
  const againstState = join(work, 'state-against');
  const envOf = (state: string, extra: Record<string, string> = {}) => benchServeEnv(root, state, { HPD_BASE_URL: BASE_URL, ...extra });
  const keys: Record<KeyName, string | null> = {
    enterprise: createKey(envOf(oursState), 'enterprise', 'ab-enterprise'),
    pro: createKey(envOf(oursState), 'pro', 'ab-pro'),
    free: createKey(envOf(oursState), 'free', 'ab-free'),
    none: null,
    unknown: `hpd_${'0'.repeat(40)}`,
  };
  cpSync(oursState, againstState, { recursive: true });

  const registry = openRegistry(root, BASE_URL, years);
  const started = performance.now();
  let cases: AbCase[];
  try {
    cases = abCases(registry, count, seed);
  } finally {
    registry.close();
  }
  log(`${cases.length} cases drawn (seed ${seed}) from PY${years.join(', PY')} in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const serve = async (name: string, checkout: string, state: string, extra: Record<string, string>): Promise<Side> => {
    const { server, origin } = await spawnHpdServe({
      name,
      command: process.execPath,
      args: [join(checkout, 'bin/hpd.js'), 'serve', ...(workers === undefined ? [] : ['--workers', workers])],
      env: envOf(state, extra),
      cwd: checkout,
      // Read and dropped: the access log of ~16,000 requests is not kept in memory.
      onStdoutLine: () => {},
    });
    servers.push(server);
    // A signal that came while it started: cleanUp may have looked at the list before it was on it.
    if (stopping !== null) {
      await server.stop(10_000);
      throw new Error('stopped');
    }
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    agents.push(agent);
    return { name, origin, agent, keys };
  };
  // Both started before either failure is reported, so that cleanUp finds both.
  const sides = await Promise.allSettled([serve('ours', ROOT, oursState, {}), serve('against', againstDir, againstState, againstExtra)]);
  const notStarted = sides.find((r) => r.status === 'rejected');
  if (notStarted !== undefined) throw notStarted.reason;
  const [ours, against] = sides.map((r) => (r as PromiseFulfilledResult<Side>).value) as [Side, Side];
  const pid = (name: string) => servers.find((s) => s.name === name)?.pid;
  log(
    `ours ${ROOT} (pid ${pid('ours')}) at ${ours.origin}, against ${againstDir} (pid ${pid('against')}) at ${against.origin}${workers === undefined ? '' : `, --workers ${workers}`}`,
  );

  const digests: Record<'ours' | 'against', Hash> = { ours: createHash('sha256'), against: createHash('sha256') };
  const statuses: Record<'ours' | 'against', Map<number, number>> = { ours: new Map(), against: new Map() };
  const requests = { ours: 0, against: 0 };
  const mismatches: Array<{ index: number; request: string; diff: Difference[] }> = [];
  let mismatchCount = 0;
  /** Cases by kind of difference, with the first case of each. */
  const kinds = new Map<string, { cases: number; first: number }>();
  // Digests are fed in request order while cases finish out of order: a finished case waits here until
  // every earlier one has been fed.
  const pending: Array<[Exchange[], Exchange[]] | undefined> = [];
  let fed = 0;
  const feed = (): void => {
    for (; fed < pending.length && pending[fed] !== undefined; fed++) {
      const [a, b] = pending[fed]!;
      for (const [side, list] of [
        ['ours', a],
        ['against', b],
      ] as const) {
        for (const e of list) {
          digestExchange(digests[side], e);
          statuses[side].set(e.status, (statuses[side].get(e.status) ?? 0) + 1);
          requests[side]++;
        }
      }
      pending[fed] = undefined;
    }
  };
  const sendStarted = performance.now();
  let done = 0;
  await mapLimit(cases, concurrency, async (c, i) => {
    const [a, b] = await Promise.all([runCase(ours, c), runCase(against, c)]);
    const diff = caseDifferences(a, b);
    if (diff.length > 0) {
      mismatchCount++;
      for (const kind of new Set(diff.map((d) => d.kind))) {
        const k = kinds.get(kind);
        if (k === undefined) kinds.set(kind, { cases: 1, first: i });
        else {
          k.cases++;
          k.first = Math.min(k.first, i);
        }
      }
      // The 20 first in request order, whichever finished first.
      if (mismatches.length < 20 || i < mismatches[mismatches.length - 1]!.index) {
        mismatches.push({
          index: i,
          request: `${c.first.method} ${c.first.path} (key ${c.first.key}${c.first.acceptEncoding === undefined ? '' : `, accept-encoding ${c.first.acceptEncoding}`}${c.follow === undefined ? '' : `, then ${c.follow.kind}`})`,
          diff,
        });
        mismatches.sort((x, y) => x.index - y.index).splice(20);
      }
    }
    pending[i] = [a, b];
    feed();
    if (++done % 2000 === 0) log(`${done} / ${cases.length} cases`);
  });
  feed();
  const seconds = (performance.now() - sendStarted) / 1000;

  const byStatus = (m: Map<number, number>): string =>
    [...m]
      .sort(([x], [y]) => x - y)
      .map(([s, n]) => `${s === 0 ? 'no answer' : s} ×${n}`)
      .join(', ');
  const digest = { ours: digests.ours.digest('hex'), against: digests.against.digest('hex') };
  const out: string[] = [
    `cases: ${cases.length} (seed ${seed}); requests: ours ${requests.ours}, against ${requests.against}, in ${seconds.toFixed(1)} s (${workers === undefined ? 'default workers' : `--workers ${workers}`}, ${concurrency} cases in flight)`,
    `statuses, ours: ${byStatus(statuses.ours)}`,
    `statuses, against: ${byStatus(statuses.against)}`,
    `headers not compared: ${[...PER_REQUEST_HEADERS].join(', ')}`,
    `mismatches: ${mismatchCount}`,
  ];
  for (const m of mismatches) out.push(`  #${m.index} ${m.request}`, ...m.diff.map((d) => `    ${d.text}`));
  if (mismatchCount > mismatches.length) out.push(`  … and ${mismatchCount - mismatches.length} more`);
  if (kinds.size > 0) {
    out.push('differences by kind (cases, first case):');
    const sorted = [...kinds].sort(([, x], [, y]) => y.cases - x.cases || x.first - y.first);
    for (const [kind, k] of sorted.slice(0, 30)) out.push(`  ${kind}: ${k.cases} (#${k.first})`);
    if (sorted.length > 30) out.push(`  … and ${sorted.length - 30} more kinds`);
  }
  // A request that got no answer (reset, timeout) is no proof of equal answers, even when both sides lost one.
  const unanswered = (statuses.ours.get(0) ?? 0) + (statuses.against.get(0) ?? 0);
  if (unanswered > 0) out.push(`requests without an answer: ${unanswered} (the run fails)`);
  out.push(`digest ours:    sha256:${digest.ours}`, `digest against: sha256:${digest.against}`);
  out.push(digest.ours === digest.against && mismatchCount === 0 ? 'digests equal' : 'DIGESTS DIFFER');
  process.stdout.write(`${out.join('\n')}\n`);
  failed = mismatchCount > 0 || digest.ours !== digest.against || unanswered > 0;
} catch (err) {
  process.stderr.write(`bench:ab: ${(err as Error).message.split('\n')[0]}\n`);
  await cleanUp();
  process.exit(2);
}
await cleanUp();
process.exit(failed ? 1 : 0);
