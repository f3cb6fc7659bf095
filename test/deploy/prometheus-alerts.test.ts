/**
 * deploy/prometheus-alerts.yml as shipped: Debian's promtool accepts it, its alerts fire on the series
 * hpd exposes (promtool's rule unit tests, on synthetic scrapes) and stay silent on a healthy instance,
 * and every hpd metric it names is one the exposition writes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';

const PROMTOOL = '/usr/bin/promtool';
const RULES = fileURLToPath(new URL('../../deploy/prometheus-alerts.yml', import.meta.url));
const OBSERVABILITY = fileURLToPath(new URL('../../src/observability/', import.meta.url));

function promtool(args: readonly string[]): { status: number | null; output: string } {
  const r = spawnSync(PROMTOOL, args, { encoding: 'utf8' });
  assert.equal(r.error, undefined, `${PROMTOOL} is missing: apt-get install -y prometheus`);
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

test('promtool check rules accepts deploy/prometheus-alerts.yml', () => {
  const r = promtool(['check', 'rules', RULES]);
  assert.equal(r.status, 0, r.output);
  assert.match(r.output, /SUCCESS: \d+ rules found/);
});

test('every hpd_ metric the alerts name is written by the exposition', () => {
  const rules = readFileSync(RULES, 'utf8');
  const sources = readdirSync(OBSERVABILITY)
    .map((f) => readFileSync(join(OBSERVABILITY, f), 'utf8'))
    .join('\n');
  const names = new Set([...rules.matchAll(/\b(hpd_[a-z_]+|nodejs_[a-z_]+)\b/g)].map((m) => m[1]!));
  assert.ok(names.has('hpd_state_store_health'));
  for (const name of names) assert.ok(sources.includes(`'${name}'`), `${name} is not exposed by src/observability`);
});

interface Rule {
  readonly alert: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** What promtool must find firing: the rule's labels and annotations, templated for `labels`. */
function firing(alert: string, labels: Readonly<Record<string, string>>): object {
  const doc = parse(readFileSync(RULES, 'utf8')) as { groups: Array<{ rules: Rule[] }> };
  const rule = doc.groups.flatMap((g) => g.rules).find((r) => r.alert === alert);
  assert.ok(rule !== undefined, alert);
  const templated = Object.fromEntries(
    Object.entries(rule.annotations).map(([k, v]) => [k, v.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, l: string) => labels[l] ?? '')]),
  );
  return { exp_labels: { ...rule.labels, ...labels }, exp_annotations: templated };
}

const series = (name: string, labels: Readonly<Record<string, string>>, values: string): object => ({
  series: `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`,
  values,
});

const A = { job: 'hpd', instance: 'a:9464' };
const B = { job: 'hpd', instance: 'b:9464' };

/** Samples every 30 s: FLUSHALL seen by one instance at 3 min, the other healthy; then an outage past the grace and an instance gone. */
const CASES = {
  rule_files: [RULES],
  evaluation_interval: '30s',
  tests: [
    {
      interval: '30s',
      input_series: [
        series('hpd_state_store_health', { ...A, state: 'ok' }, '1x5 0x14'),
        series('hpd_state_store_health', { ...A, state: 'lost' }, '0x5 1x14'),
        series('up', A, '1x20'),
        series('hpd_state_store_health', { ...B, state: 'ok' }, '1x20'),
        series('hpd_state_store_health', { ...B, state: 'lost' }, '0x20'),
        series('up', B, '1x20'),
      ],
      alert_rule_test: [
        { eval_time: '2m', alertname: 'HpdStateStoreLost', exp_alerts: [] },
        { eval_time: '5m', alertname: 'HpdStateStoreLost', exp_alerts: [firing('HpdStateStoreLost', { ...A, state: 'lost' })] },
        { eval_time: '5m', alertname: 'HpdInstanceDown', exp_alerts: [] },
        { eval_time: '5m', alertname: 'HpdStateStoreDegraded', exp_alerts: [] },
      ],
    },
    {
      interval: '30s',
      input_series: [
        series('hpd_state_store_health', { ...A, state: 'degraded' }, '0x1 1x7 0x10'),
        series('hpd_state_store_health', { ...A, state: 'unavailable' }, '0x9 1x10'),
        series('up', B, '1x3 0x16'),
      ],
      alert_rule_test: [
        { eval_time: '1m', alertname: 'HpdStateStoreDegraded', exp_alerts: [] },
        { eval_time: '3m', alertname: 'HpdStateStoreDegraded', exp_alerts: [firing('HpdStateStoreDegraded', { ...A, state: 'degraded' })] },
        { eval_time: '5m', alertname: 'HpdStateStoreDegraded', exp_alerts: [] },
        {
          eval_time: '5m',
          alertname: 'HpdStateStoreUnavailable',
          exp_alerts: [firing('HpdStateStoreUnavailable', { ...A, state: 'unavailable' })],
        },
        { eval_time: '3m', alertname: 'HpdInstanceDown', exp_alerts: [firing('HpdInstanceDown', B)] },
      ],
    },
  ],
};

test('promtool test rules: lost, degraded, unavailable and a down instance alert; a healthy instance does not', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-alerts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'alerts.test.yml');
  writeFileSync(file, stringify(CASES));
  const r = promtool(['test', 'rules', file]);
  assert.equal(r.status, 0, r.output);
  assert.match(r.output, /SUCCESS/);
});
