/**
 * @module The Prometheus text exposition format (version 0.0.4), written by hand: a few families of
 * counters, gauges and histograms need no library, and no library aggregates across worker threads.
 *
 * @example
 * const text = new PrometheusText().family('hpd_up', 'gauge', 'Always 1.', [{ labels: {}, value: 1 }]).toString();
 */
import type { HistogramSample, Sample } from './request-metrics.ts';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Label values may hold any text; the format escapes backslash, double quote and newline. */
function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function labelText(labels: Readonly<Record<string, string>>, extra?: readonly [string, string]): string {
  const pairs = Object.entries(labels);
  if (extra !== undefined) pairs.push([extra[0], extra[1]]);
  return pairs.length === 0 ? '' : `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
}

function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

export class PrometheusText {
  readonly #lines: string[] = [];

  family(name: string, type: 'counter' | 'gauge', help: string, samples: readonly Sample[]): this {
    this.#lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
    for (const s of samples) this.#lines.push(`${name}${labelText(s.labels)} ${num(s.value)}`);
    return this;
  }

  histogram(name: string, help: string, samples: readonly HistogramSample[]): this {
    this.#lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} histogram`);
    for (const h of samples) {
      for (const [le, count] of h.buckets) this.#lines.push(`${name}_bucket${labelText(h.labels, ['le', le])} ${num(count)}`);
      this.#lines.push(`${name}_sum${labelText(h.labels)} ${num(h.sum)}`, `${name}_count${labelText(h.labels)} ${num(h.count)}`);
    }
    return this;
  }

  toString(): string {
    return `${this.#lines.join('\n')}\n`;
  }
}
