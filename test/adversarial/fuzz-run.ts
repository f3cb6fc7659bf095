/**
 * @module `npm run fuzz -- [--seed N] [--count N] [--from N] [--only i,j] [--concurrency N]`: the
 * adversarial fuzzer at any length, against a fresh child service. Prints failures grouped by reason
 * with a replayable case each, the case counts per family and the child's RSS; exits 1 on any failure.
 */
import { parseArgs } from 'node:util';
import { describeFailure, learnContext, runCases } from './fuzz-driver.ts';
import { startFuzzService } from './fuzz-service.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    count: { type: 'string' },
    from: { type: 'string' },
    only: { type: 'string' },
    concurrency: { type: 'string' },
  },
});
const seed = values.seed === undefined ? (Math.random() * 2 ** 32) >>> 0 : Number(values.seed) >>> 0;
const count = Number(values.count ?? 50_000);
const from = Number(values.from ?? 0);
const only = values.only?.split(',').map(Number);
process.stdout.write(`fuzz: seed ${seed}, ${only === undefined ? `cases ${from}..${from + count - 1}` : `cases ${only.join(',')}`}\n`);
const svc = await startFuzzService();
const started = Date.now();
let code = 0;
try {
  const ctx = await learnContext(svc);
  const r = await runCases(svc, seed, from, count, {
    ctx,
    only,
    concurrency: Number(values.concurrency ?? 8),
    onProgress: (n) => n % 5000 === 0 && process.stdout.write(`  ${n} sent, RSS ${svc.rssKiB() ?? '-'} KiB\n`),
  });
  const byReason = new Map<string, string[]>();
  for (const f of r.failures) {
    const key = f.reason.replace(/\d+/g, 'N').slice(0, 120) + (f.answer !== undefined ? ` (${f.answer.status})` : '');
    byReason.set(key, [...(byReason.get(key) ?? []), describeFailure(f)]);
  }
  for (const [reason, lines] of byReason) process.stdout.write(`\n${lines.length}× ${reason}\n  ${lines.slice(0, 5).join('\n  ')}\n`);
  const fams = [...r.families].sort((a, b) => b[1] - a[1]);
  process.stdout.write(
    `\n${r.sent} cases in ${((Date.now() - started) / 1000).toFixed(1)} s, ${fams.length} families; RSS start ${r.rssStartKiB} KiB, max ${r.rssMaxKiB} KiB, end ${r.rssEndKiB} KiB; alive ${!r.died}; ${r.failures.length} failures\n`,
  );
  if (r.failures.length > 0 || r.died) code = 1;
  if (r.died) process.stdout.write(`child stderr (tail):\n${svc.stderr().slice(-4000)}\n`);
} finally {
  await svc.close();
}
process.exit(code);
