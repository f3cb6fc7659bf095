/**
 * What the command line answers to slips: `hpd --version`, and unknown commands, subcommands and options
 * answered in one line with the closest known name (edit distance), no node:util quoting, exit 2. The
 * CLI runs as a real child process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../src/config/settings.ts';
import { closest, editDistance } from '../../src/operations/suggest.ts';
import { runHpd } from '../helpers/run-hpd.ts';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

test('editDistance counts insertions, deletions, substitutions and swaps; closest refuses far names', () => {
  assert.equal(editDistance('--label', '--label'), 0);
  assert.equal(editDistance('--lable', '--label'), 1, 'a swap of neighbours is one edit');
  assert.equal(editDistance('--labl', '--label'), 1);
  assert.equal(editDistance('serv', 'serve'), 1);
  assert.equal(editDistance('kitten', 'sitting'), 3);
  assert.equal(closest('--lable', ['--tier', '--user', '--label']), '--label');
  assert.equal(closest('--JSON', ['--json']), '--json');
  assert.equal(closest('--frobnicate', ['--tier', '--user', '--label']), undefined);
  assert.equal(closest('x', ['list', 'use']), undefined);
});

test('hpd --version and hpd version print the package version', async () => {
  for (const args of [['--version'], ['version']]) {
    const r = await runHpd(args, { env: process.env, cwd: REPO_ROOT });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `hpd ${VERSION}\n`);
    assert.equal(r.stderr, '');
  }
});

test('unknown commands and options: one line with a did-you-mean, no stray quoting, exit 2', async () => {
  const state = mkdtempSync(join(tmpdir(), 'hpd-args-'));
  const env = { ...process.env, HPD_STATE_DIR: state, HPD_DATA_DIR: join(state, 'builds') };
  try {
    const cases: [string[], string][] = [
      [['keys', 'create', '--tier', 'pro', '--lable', 'me'], 'hpd: keys create: unknown option --lable (did you mean --label?)'],
      [['keys', 'creat'], 'hpd: keys: unknown command creat (did you mean create?)'],
      [['users', 'set-teir', 'u1', 'pro'], 'hpd: users: unknown command set-teir (did you mean set-tier?)'],
      [['builds', 'list', '--jsn'], 'hpd: builds list: unknown option --jsn (did you mean --json?)'],
      [['verify', '--yaer', '2025'], 'hpd: verify: unknown option --yaer (did you mean --year?)'],
      [['serve', '--wrokers', '2'], 'hpd: serve: unknown option --wrokers (did you mean --workers?)'],
      [['serv'], 'hpd: unknown command serv (did you mean serve?)'],
      [['--verison'], 'hpd: unknown option --verison (did you mean --version?)'],
      [['config', '--frobnicate'], 'hpd: config: unknown option --frobnicate (valid: --json) (see hpd config --help)'],
      [['keys', 'create', '--tier'], 'hpd: keys create: --tier needs a value (see hpd keys --help)'],
      [['keys', 'list', '--json=yes'], 'hpd: keys list: --json takes no value (see hpd keys --help)'],
      [['reload', 'now'], 'hpd: reload: unexpected argument now (see hpd reload --help)'],
    ];
    for (const [args, line] of cases) {
      const r = await runHpd(args, { env, cwd: REPO_ROOT });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      const own = r.stderr.split('\n').filter((l) => l.startsWith('hpd:'));
      assert.deepEqual(own, [line], args.join(' '));
      assert.doesNotMatch(own[0]!, /'/, 'no quoting from node:util');
      assert.equal(r.stdout, '');
    }
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
});
