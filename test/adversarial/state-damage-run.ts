/**
 * @module `node --import ./bin/register-typescript.js test/adversarial/state-damage-run.ts [--trials N]
 * [--seed S] [--serve-every K] [--file state.mdb|oauth.mdb] [--bytes MIN-MAX]`: the random-damage trials
 * of state-damage.ts at length, N per file (100 by default; every K-th also starts `hpd serve`; MIN–MAX
 * bytes overwritten, 4096-65536 by default), on a populated state directory and the fixture build.
 * Prints, per file: signals (must be 0), detected (verify refused it, and so did every command opening
 * it), undetected but harmless (verify ok, every record as before), undetected and harmful (must be 0),
 * other broken rules; what verify said, by kind; and each failing trial with its seed. Exits 1 on any failure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_DAMAGE, describeTrial, prepareTrials, STATE_FILES, trial, type Trial } from './state-damage.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string' },
    seed: { type: 'string' },
    'serve-every': { type: 'string' },
    file: { type: 'string' },
    bytes: { type: 'string' },
  },
});
const [min, max] = (values.bytes ?? `${DEFAULT_DAMAGE.min}-${DEFAULT_DAMAGE.max}`).split('-').map(Number) as [number, number];
const files = STATE_FILES.filter((f) => values.file === undefined || values.file === f);
const trials = Number(values.trials ?? 100);
const firstSeed = Number(values.seed ?? 1);
const serveEvery = Number(values['serve-every'] ?? 10);

const dir = mkdtempSync(join(tmpdir(), 'hpd-state-damage-run-'));
let code = 0;
try {
  const setup = await prepareTrials(dir, { min, max });
  for (const file of files) {
    const started = performance.now();
    const done: Trial[] = [];
    for (let i = 0; i < trials; i++) {
      done.push(await trial(setup, file, firstSeed + i, i % serveEvery === 0));
      rmSync(join(setup.work, `${file}-${firstSeed + i}`), { recursive: true, force: true });
    }
    const signals = done.filter((t) => t.failures.some((f) => f.includes('killed by'))).length;
    const detected = done.filter((t) => t.verify === 'refused').length;
    const harmless = done.filter((t) => t.verify === 'ok' && t.harmless).length;
    const harmful = done.filter((t) => t.verify === 'ok' && !t.harmless).length;
    const failed = done.filter((t) => t.failures.length > 0);
    const served = done.filter((t) => t.serve !== null).length;
    process.stdout.write(
      `${file}, ${min}–${max} bytes: ${trials} trials (${served} with serve) in ${((performance.now() - started) / 1000).toFixed(0)} s: signals ${signals}, detected ${detected}, undetected but harmless ${harmless}, undetected and harmful ${harmful}, trials breaking a rule ${failed.length}\n`,
    );
    const reasons = new Map<string, number>();
    for (const t of done) {
      if (t.reason === null) continue;
      const kind = t.reason.replace(/\d+/g, 'N').replace(/"[^"]*"/g, '"…"');
      reasons.set(kind, (reasons.get(kind) ?? 0) + 1);
    }
    for (const [kind, n] of [...reasons].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${String(n).padStart(3)}× ${kind}\n`);
    for (const t of failed) process.stdout.write(`  ${describeTrial(t)}\n`);
    if (failed.length > 0) code = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = code;
