/**
 * @module The whole /metrics document: the request counters every thread adds to, the builds served
 * now (read from the live registry at each scrape, so a hot swap shows on the next one), the memory
 * of their tables, and the process (CPU, memory, event-loop delay).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { DataRegistry } from '../operations/data-registry.ts';
import type { StateStore, StoreHealth } from '../policy/state-store.ts';
import { PrometheusText } from './prometheus-text.ts';
import type { RequestMetrics, Sample } from './request-metrics.ts';

export interface ExpositionSources {
  readonly requests: RequestMetrics;
  /** The snapshot served now. */
  readonly registry: () => DataRegistry;
  /** REST worker threads serving now and replaced since start; absent when REST runs in the main thread. */
  readonly workers?: () => { readonly serving: number; readonly replaced: number };
  /** The main thread's state store, whose health every thread's shares (they watch the same Redis). */
  readonly store?: Pick<StateStore, 'health'>;
}

const HEALTHS: readonly StoreHealth[] = ['ok', 'degraded', 'lost', 'unavailable'];
const STORE_HEALTH_HELP =
  'State store health, 1 for the current state: ok; degraded (Redis unreachable, known keys served); lost (Redis lost the data or holds another dataset, known keys served); unavailable (past the grace: every authenticated request 503).';

/** `hpd_state_store_health`: every state, so an alert on one of them sees 0 as well as 1. */
function storeHealthSamples(health: StoreHealth): Sample[] {
  return HEALTHS.map((state) => ({ labels: { state }, value: state === health ? 1 : 0 }));
}

export interface MetricsExposition {
  render(): string;
  close(): void;
}

const START_SECONDS = Date.now() / 1000;

/** `hpd_build_info` and `hpd_dataset_bytes`: the build served per year and the shared memory it holds. */
function datasetSamples(reg: ReturnType<ExpositionSources['registry']>): { info: Sample[]; bytes: Sample[] } {
  const info: Sample[] = [];
  const bytes: Sample[] = [];
  for (const year of reg.years) {
    const y = reg.get(year);
    if (y === undefined) continue;
    const labels = { year: String(year) };
    info.push({ labels: { ...labels, build: y.ds.buildHash }, value: 1 });
    const c = y.image.catalog;
    bytes.push(
      { labels: { ...labels, part: 'tables' }, value: y.image.dataset.tables.byteLength },
      { labels: { ...labels, part: 'derived' }, value: y.image.dataset.derived.byteLength },
      {
        labels: { ...labels, part: 'catalog' },
        value: c.bytes.byteLength + c.offsets.byteLength + c.money.byteLength + c.metal.byteLength,
      },
    );
  }
  return { info, bytes };
}

export function createMetricsExposition(s: ExpositionSources): MetricsExposition {
  // Delay of this (main) thread's event loop, which runs MCP, the authorization server, the quota's
  // persistence and, without workers, REST. Reset at each scrape: the figures cover the interval.
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  return {
    render() {
      const r = s.requests.snapshot();
      const reg = s.registry();
      const { info, bytes } = datasetSamples(reg);
      const cpu = process.cpuUsage();
      const mem = process.memoryUsage();
      const lag = { p99: delay.percentile(99) / 1e9, max: delay.max / 1e9, mean: Number.isNaN(delay.mean) ? 0 : delay.mean / 1e9 };
      delay.reset();
      const text = new PrometheusText()
        .family(
          'hpd_http_requests_total',
          'counter',
          'Requests answered, by front, route (path template) and status, summed over every thread.',
          r.requests,
        )
        .histogram(
          'hpd_http_request_duration_seconds',
          'Time from routing a request to writing its response, in the process (network excluded).',
          r.latency,
        )
        .family(
          'hpd_quota_refusals_total',
          'counter',
          "Requests refused because the daily quota of the caller's tier was used up (REST 429 and MCP tool calls).",
          r.quotaRefusals,
        )
        .family(
          'hpd_auth_failures_total',
          'counter',
          'Requests refused by authentication: missing or invalid credential, or state store unavailable.',
          r.authFailures,
        )
        .family(
          'hpd_response_cache_lookups_total',
          'counter',
          'REST response-cache lookups of cacheable operations, by result.',
          r.cacheLookups,
        )
        .family(
          'hpd_search_cache_lookups_total',
          'counter',
          'REST search-cache lookups (HPD_SEARCH_CACHE_MB), by result.',
          r.searchCacheLookups,
        )
        .family('hpd_build_info', 'gauge', 'The build served for each plan year (value always 1).', info)
        .family('hpd_dataset_bytes', 'gauge', "Shared memory held by each served year's data, by part.", bytes);
      if (s.store !== undefined) text.family('hpd_state_store_health', 'gauge', STORE_HEALTH_HELP, storeHealthSamples(s.store.health()));
      const w = s.workers?.();
      if (w !== undefined) {
        text
          .family('hpd_rest_workers', 'gauge', 'REST worker threads serving now.', [{ labels: {}, value: w.serving }])
          .family('hpd_rest_worker_replacements_total', 'counter', 'REST worker threads started to replace one that died.', [
            { labels: {}, value: w.replaced },
          ]);
      }
      return text
        .family('process_cpu_user_seconds_total', 'counter', 'User CPU time of the process (every thread).', [
          { labels: {}, value: cpu.user / 1e6 },
        ])
        .family('process_cpu_system_seconds_total', 'counter', 'System CPU time of the process (every thread).', [
          { labels: {}, value: cpu.system / 1e6 },
        ])
        .family('process_resident_memory_bytes', 'gauge', 'Resident set size of the process.', [{ labels: {}, value: mem.rss }])
        .family('process_start_time_seconds', 'gauge', 'Start time of the process since the Unix epoch.', [
          { labels: {}, value: Math.round(START_SECONDS) },
        ])
        .family('nodejs_heap_used_bytes', 'gauge', 'V8 heap in use in the main thread.', [{ labels: {}, value: mem.heapUsed }])
        .family('nodejs_heap_total_bytes', 'gauge', 'V8 heap reserved in the main thread.', [{ labels: {}, value: mem.heapTotal }])
        .family(
          'nodejs_external_memory_bytes',
          'gauge',
          'Memory of C++ objects bound to JavaScript (Buffers, SharedArrayBuffers) in the main thread.',
          [{ labels: {}, value: mem.external }],
        )
        .family('nodejs_eventloop_delay_seconds', 'gauge', 'Event-loop delay of the main thread since the previous scrape, by statistic.', [
          { labels: { stat: 'mean' }, value: lag.mean },
          { labels: { stat: 'p99' }, value: lag.p99 },
          { labels: { stat: 'max' }, value: lag.max },
        ])
        .toString();
    },
    close() {
      delay.disable();
    },
  };
}
