/**
 * @module Results of a suite run as files: the JSON record, a markdown report (the tables the README
 * shows) and an SVG chart of the ratios and latency percentiles, drawn here without a chart library.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { SuiteResult, TargetName, WorkloadResult } from './suite.ts';
import { fmtMs, fmtRate, fmtRatio, MIB } from './util.ts';

const TARGET_LABEL: Record<TargetName, string> = {
  ours: 'ours (hpd serve, uWS; search cache off)',
  baseline: 'baseline (Hono + SQLite)',
  ceiling: 'ceiling (bare uWS, prebuilt bytes)',
  ours_cached: 'ours, search cache on (its default size)',
};
const COLOR: Record<TargetName, string> = { ours: '#1f6fb4', baseline: '#c8372d', ceiling: '#7a7a7a', ours_cached: '#6fb0e6' };
const ORDER: readonly TargetName[] = ['ours', 'baseline', 'ceiling', 'ours_cached'];
const pct = (x: number): string => `${(x * 100).toFixed(x >= 0.995 || x < 0.1 ? 1 : 0)} %`;

/** `2026-11-20T22-55-04Z`: sortable, and legal in file names everywhere. */
export function stamp(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
}

export function markdownReport(r: SuiteResult, chartFile: string | null): string {
  const lines: string[] = [];
  const pin =
    r.machine.pinning === null
      ? 'no CPU pinning (fewer than 2 cores or no taskset)'
      : `servers pinned to CPU ${r.machine.pinning.serverCpu}, load generator to CPU ${r.machine.pinning.generatorCpu}`;
  lines.push(
    `Run ${r.started_at} (${r.mode} mode, ${r.wall_seconds.toFixed(0)} s): Node ${r.machine.node}, ${r.machine.cpus} × ${r.machine.cpu_model}; ${pin}; load generator ${r.machine.load_generator}; load average ${r.machine.loadavg_start.map((x) => x.toFixed(2)).join(' ')} at start.`,
    `Data: PY${r.dataset.year} build ${r.dataset.build_hash.slice(0, 12)} (${r.dataset.plans} plans, ${r.dataset.zips} ZIPs, ${r.dataset.data_source}), served by all targets. ` +
      `${r.settings.reps} × ${r.settings.duration_s} s per target and workload, targets alternated; full load = ${r.settings.connections} connections (closed loop, wrk); medians of the repetitions; errors summed. ` +
      `Search cache: ${r.search_cache.uncached_note}.`,
    '',
  );
  if (r.checks.length > 0) lines.push(...checksTable(r), '');
  lines.push(...fullLoadTable(r), '', ...openLoopTable(r), '', ...searchTable(r), '');
  lines.push(
    '| workload | ours ÷ baseline (req/s) | ours ÷ ceiling (req/s) | response size (headers + body) | URLs (distinct) |',
    '|---|---:|---:|---:|---:|',
  );
  for (const w of r.workloads.filter((x) => x.targets.ceiling !== undefined)) {
    const ratio = r.ratios[w.name];
    const size = w.targets.ours?.full.median.bytes_per_response ?? 0;
    lines.push(
      `| ${w.name} | ${ratio?.ours_baseline == null ? 'n/a' : fmtRatio(ratio.ours_baseline)} | ${ratio?.ours_ceiling == null ? 'n/a' : fmtRatio(ratio.ours_ceiling)} | ${(size / 1024).toFixed(1)} KiB | ${w.urls.toLocaleString('en-US')} (${w.distinct_urls.toLocaleString('en-US')}) |`,
    );
  }
  lines.push(
    '',
    '| process | peak RSS (VmHWM) | RSS after start-up | largest RSS after a run | at the end: anonymous / file-backed |',
    '|---|---:|---:|---:|---:|',
  );
  const mib = (b: number | undefined): string => (b === undefined || !Number.isFinite(b) ? '–' : `${(b / MIB).toFixed(0)} MiB`);
  for (const t of ORDER) {
    const m = r.memory[t];
    if (m === undefined) continue;
    if (m === null) lines.push(`| ${TARGET_LABEL[t]} | – | – | – | – |`);
    else
      lines.push(
        `| ${TARGET_LABEL[t]} | ${mib(m.hwm_bytes)} | ${mib(m.idle?.rss_bytes)} | ${mib(m.rss_max_bytes)} | ${mib(m.end.anon_bytes)} / ${mib(m.end.file_bytes)} |`,
      );
  }
  lines.push('', `Open loop: ${r.settings.open_loop}.`, `Baseline: ${r.settings.baseline}.`);
  lines.push(
    `Bodies verified before the runs: ${Object.entries(r.verification.compared)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')} responses compared with ours, ${r.verification.mismatches.length} mismatches.`,
  );
  if (chartFile !== null) lines.push('', `![ratios and latency](${chartFile})`);
  lines.push(
    '',
    `<details><summary>Micro-benchmarks (tinybench, in the harness process, build ${r.dataset.build_hash.slice(0, 12)}; µs per call)</summary>`,
    '',
    '| group | task | ops/s | median µs | p99 µs |',
    '|---|---|---:|---:|---:|',
  );
  for (const m of r.micro) lines.push(`| ${m.group} | ${m.task} | ${m.ops_per_s.toLocaleString('en-US')} | ${m.median_us} | ${m.p99_us} |`);
  lines.push('', '</details>');
  return `${lines.join('\n')}\n`;
}

function checksTable(r: SuiteResult): string[] {
  const lines = ['| target of the issue | measured | target | |', '|---|---:|---:|---|'];
  for (const c of r.checks) {
    const v =
      c.unit === '×'
        ? fmtRatio(c.value)
        : c.unit === 'ms'
          ? `${fmtMs(c.value)} ms`
          : c.unit === 'MiB'
            ? `${c.value.toFixed(0)} MiB`
            : String(c.value);
    const t = c.unit === '×' ? `${c.target}×` : `${c.target}${c.unit === '' ? '' : ` ${c.unit}`}`;
    lines.push(`| ${c.description} | ${v} | ${c.direction === '>=' ? '≥' : '≤'} ${t} | ${c.met ? 'met' : '**MISSED**'} |`);
  }
  return lines;
}

function fullLoadTable(r: SuiteResult): string[] {
  const lines = [
    'Full load (closed loop: wrk, as fast as the server answers):',
    '',
    '| workload | target | req/s | p50 ms | p99 ms | max ms | errors |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const w of r.workloads) {
    let first = true;
    for (const t of ORDER) {
      const x = w.targets[t];
      const name = first ? `**${w.name}**` : '';
      if (x === undefined) {
        if (w.skipped[t] !== undefined) {
          lines.push(`| ${name} | ${t} | n/a: ${w.skipped[t]} ||||||`);
          first = false;
        }
        continue;
      }
      const f = x.full.median;
      lines.push(`| ${name} | ${t} | ${fmtRate(f.rps)} | ${fmtMs(f.p50_ms)} | ${fmtMs(f.p99_ms)} | ${fmtMs(f.max_ms)} | ${f.errors} |`);
      first = false;
    }
  }
  return lines;
}

/** Ours and the ceiling at the same constant offered rates (wrk2). */
function openLoopTable(r: SuiteResult): string[] {
  const rows = r.workloads.filter((w) => w.open_loop.length > 0);
  if (rows.length === 0) return ['Open loop: not run.'];
  const lines = [
    'Open loop (wrk2 at a constant rate, a fraction of our median full-load rate; latency corrected for coordinated omission, uncorrected p99 beside it):',
    '',
    '| workload | offered | target | achieved req/s | p50 ms | p99 ms | p99.9 ms | max ms | uncorrected p99 ms | errors | p99 ours ÷ ceiling |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const w of rows) {
    w.open_loop.forEach((x, i) => {
      (['ours', 'ceiling'] as const).forEach((t, j) => {
        const m = x.targets[t]?.median;
        const head = `| ${i === 0 && j === 0 ? `**${w.name}**` : ''} | ${j === 0 ? `${Math.round(x.level * 100)} % = ${fmtRate(x.rate)}/s` : ''} | ${t} |`;
        if (m === undefined) {
          lines.push(`${head} – | – | – | – | – | – | – | |`);
          return;
        }
        const ratio =
          j === 0 && x.p99_ratio !== null ? `${x.level === 0.8 ? '**' : ''}${fmtRatio(x.p99_ratio)}${x.level === 0.8 ? '**' : ''}` : '';
        lines.push(
          `${head} ${fmtRate(m.achieved_rps)} | ${fmtMs(m.corrected.p50)} | ${fmtMs(m.corrected.p99)} | ${fmtMs(m.corrected.p999)} | ${fmtMs(m.corrected.max)} | ${m.uncorrected === null ? '–' : fmtMs(m.uncorrected.p99)} | ${m.errors} | ${ratio} |`,
        );
      });
    });
  }
  return lines;
}

/** The cost of one uncached search next to the realistic stream with the search cache on. */
function searchTable(r: SuiteResult): string[] {
  const search = r.workloads.find((w) => w.name === 'search');
  const real = r.workloads.find((w) => w.name === 'realistic');
  const sc = r.search_cache.realistic;
  if (search === undefined && real === undefined) return [];
  const ceiling = search?.targets.ceiling?.full.median.rps;
  const vsCeiling = (rps: number | undefined): string => (rps === undefined || ceiling === undefined ? '–' : fmtRatio(rps / ceiling));
  const lines = [
    'Search: every response computed vs a realistic stream through the search cache (full load):',
    '',
    '| search workload | server | req/s | ÷ ceiling (search) | p99 ms | search cache hit rate |',
    '|---|---|---:|---:|---:|---|',
  ];
  const row = (label: string, server: string, s: { rps: number; p99_ms: number } | undefined, hit: string): void => {
    if (s !== undefined) lines.push(`| ${label} | ${server} | ${fmtRate(s.rps)} | ${vsCeiling(s.rps)} | ${fmtMs(s.p99_ms)} | ${hit} |`);
  };
  row(
    `unique URLs (${search?.distinct_urls ?? 0} distinct, rotated)`,
    'ours, cache off',
    search?.targets.ours?.full.median,
    'off: every response computed',
  );
  if (real !== undefined && sc !== null) {
    const label = `realistic: Zipf s = ${sc.zipf_exponent}, ${sc.universe.toLocaleString('en-US')} distinct queries (${sc.distinct_in_file.toLocaleString('en-US')} in the ${sc.requests_in_file.toLocaleString('en-US')}-request stream)`;
    row(label, 'ours, cache off', real.targets.ours?.full.median, 'off');
    const measured =
      sc.hit_rate_measured === null
        ? 'not counted by /metrics'
        : `${pct(sc.hit_rate_measured)} measured (/metrics, ${sc.lookups_measured.toLocaleString('en-US')} lookups)`;
    const estimated = sc.hit_rate_estimated === null ? '' : `; ${pct(sc.hit_rate_estimated)} estimated (LRU)`;
    const mb = r.search_cache.default_mb;
    const cacheOn = !r.search_cache.declared
      ? 'ours, defaults (no search cache in this build)'
      : mb === 0
        ? 'ours, search cache at its size in effect: 0 MiB (off)'
        : `ours, cache on (${mb ?? 'default'} MiB)`;
    row(label, cacheOn, real.targets.ours_cached?.full.median, `${measured}${estimated}`);
  }
  row('unique URLs', 'ceiling', search?.targets.ceiling?.full.median, 'replays recorded bytes');
  if (sc !== null) lines.push('', `Realistic stream: ${sc.weighting}. Hit-rate estimate: ${sc.estimate_basis}.`);
  return lines;
}

const esc = (s: string): string => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** Two panels: throughput ratios (with the issue's targets) and latency p50–p99 (and max) per target. */
export function svgChart(r: SuiteResult): string {
  const W = 960;
  const out: string[] = [];
  const text = (x: number, y: number, s: string, attrs = ''): void =>
    void out.push(`<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${esc(s)}</text>`);
  const line = (x1: number, y1: number, x2: number, y2: number, attrs: string): void =>
    void out.push(`<line x1="${x1.toFixed(1)}" y1="${y1.toFixed(1)}" x2="${x2.toFixed(1)}" y2="${y2.toFixed(1)}" ${attrs}/>`);
  const rect = (x: number, y: number, w: number, h: number, attrs: string): void =>
    void out.push(`<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(0, w).toFixed(1)}" height="${h.toFixed(1)}" ${attrs}/>`);

  // Panel 1: ratios.
  let y = 30;
  text(
    20,
    y,
    `Throughput ratios, requests/s (median of ${r.settings.reps} runs, full load) — ${r.started_at.slice(0, 16).replace('T', ' ')} UTC`,
    'font-size="15" font-weight="bold"',
  );
  y += 22;
  // The realistic stream has no baseline or ceiling of its own (the search table compares it).
  const rows = r.workloads.filter((w) => w.targets.ceiling !== undefined);
  const rowH = 26;
  const top = y + 18;
  const labelW = 90;
  // Left: ours ÷ baseline on log10 from 1× to 100×.
  const lx = 20 + labelW;
  const lw = 330;
  const logX = (v: number): number => lx + (Math.log10(Math.min(100, Math.max(1, v))) / 2) * lw;
  // Right: ours ÷ ceiling on 0..1.2.
  const rx = lx + lw + 60 + labelW;
  const rw = 300;
  const linX = (v: number): number => rx + (Math.min(1.2, Math.max(0, v)) / 1.2) * rw;
  text(lx, y + 8, 'ours ÷ baseline (log scale)', 'font-size="12" fill="#333"');
  text(rx, y + 8, 'ours ÷ ceiling', 'font-size="12" fill="#333"');
  const bottom = top + rows.length * rowH;
  for (const v of [1, 2, 5, 10, 20, 50, 100]) {
    line(logX(v), top - 4, logX(v), bottom, 'stroke="#e3e3e3"');
    text(logX(v), bottom + 14, `${v}×`, 'font-size="10" text-anchor="middle" fill="#555"');
  }
  for (const v of [0, 0.2, 0.4, 0.6, 0.8, 1, 1.2]) {
    line(linX(v), top - 4, linX(v), bottom, 'stroke="#e3e3e3"');
    text(linX(v), bottom + 14, `${v}`, 'font-size="10" text-anchor="middle" fill="#555"');
  }
  rows.forEach((w, i) => {
    const cy = top + i * rowH;
    const ratio = r.ratios[w.name];
    text(lx - 8, cy + 14, w.name, 'font-size="12" text-anchor="end"');
    text(rx - 8, cy + 14, w.name, 'font-size="12" text-anchor="end"');
    if (ratio?.ours_baseline != null) {
      rect(lx, cy + 3, logX(ratio.ours_baseline) - lx, rowH - 8, `fill="${COLOR.ours}" fill-opacity="0.8"`);
      text(logX(ratio.ours_baseline) + 4, cy + 14, fmtRatio(ratio.ours_baseline), 'font-size="11"');
    } else text(lx + 4, cy + 14, 'n/a (no such endpoint in the baseline)', 'font-size="11" fill="#777"');
    if (ratio?.ours_ceiling != null) {
      rect(rx, cy + 3, linX(ratio.ours_ceiling) - rx, rowH - 8, `fill="${COLOR.ours}" fill-opacity="0.8"`);
      text(linX(ratio.ours_ceiling) + 4, cy + 14, fmtRatio(ratio.ours_ceiling), 'font-size="11"');
    }
    // Targets of the issue.
    const mark = (x: number, label: string): void => {
      line(x, cy + 1, x, cy + rowH - 3, 'stroke="#111" stroke-width="2" stroke-dasharray="3,2"');
      text(x + 3, cy + rowH - 1, label, 'font-size="9" fill="#111"');
    };
    if (w.name === 'search') {
      mark(logX(10), 'target 10×');
      mark(linX(0.5), 'target 0.5×');
    }
    if (w.name === 'years') mark(linX(0.8), 'target 0.8×');
  });
  y = bottom + 40;

  // Panel 2: latency on a log axis, 0.01 ms … 10 s: a bar from p50 to p99, a tick at max (full load)
  // or p99.9 (open loop).
  text(
    20,
    y,
    'Latency, ms (log scale): bar p50 → p99; tick = max at full load, p99.9 in the open loop at 80 %',
    'font-size="15" font-weight="bold"',
  );
  y += 16;
  const ax0 = 20 + 250;
  const aw = W - ax0 - 40;
  const minLog = -2;
  const maxLog = 4;
  const lat = (ms: number): number =>
    ax0 + ((Math.log10(Math.min(10 ** maxLog, Math.max(10 ** minLog, ms))) - minLog) / (maxLog - minLog)) * aw;
  const entries: Array<{ label: string; t: TargetName; p50: number; p99: number; max: number; group: string }> = [];
  for (const w of r.workloads as WorkloadResult[]) {
    for (const t of ORDER) {
      const s = w.targets[t]?.full.median;
      if (s !== undefined)
        entries.push({ group: w.name, label: `${w.name} · full · ${t}`, t, p50: s.p50_ms, p99: s.p99_ms, max: s.max_ms });
    }
    const at80 = w.open_loop.find((x) => x.level === 0.8);
    for (const t of ['ours', 'ceiling'] as const) {
      const c = at80?.targets[t]?.median.corrected;
      if (c !== undefined) entries.push({ group: w.name, label: `${w.name} · open 80 % · ${t}`, t, p50: c.p50, p99: c.p99, max: c.p999 });
    }
  }
  const lh = 15;
  const ltop = y + 10;
  const lbottom = ltop + entries.length * lh;
  for (let e = minLog; e <= maxLog; e++) {
    const x = lat(10 ** e);
    line(x, ltop - 4, x, lbottom, 'stroke="#e3e3e3"');
    text(
      x,
      lbottom + 14,
      e < 0 ? `${10 ** e}` : e < 3 ? `${10 ** e}` : `${10 ** (e - 3)} s`,
      'font-size="10" text-anchor="middle" fill="#555"',
    );
  }
  let prevGroup = '';
  entries.forEach((e, i) => {
    const cy = ltop + i * lh;
    if (e.group !== prevGroup && i > 0) line(20, cy, W - 20, cy, 'stroke="#ccc"');
    prevGroup = e.group;
    text(ax0 - 8, cy + 11, e.label, 'font-size="10.5" text-anchor="end"');
    rect(lat(e.p50), cy + 3, Math.max(2, lat(e.p99) - lat(e.p50)), lh - 6, `fill="${COLOR[e.t]}"`);
    line(lat(e.max), cy + 2, lat(e.max), cy + lh - 2, `stroke="${COLOR[e.t]}" stroke-width="1.5"`);
  });
  y = lbottom + 34;
  let lx2 = 20;
  for (const t of ORDER) {
    if (!entries.some((e) => e.t === t)) continue;
    rect(lx2, y - 9, 12, 10, `fill="${COLOR[t]}"`);
    text(lx2 + 16, y, TARGET_LABEL[t], 'font-size="10"');
    lx2 += 235;
  }
  const H = y + 16;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">\n<rect width="${W}" height="${H}" fill="#fff"/>\n${out.join('\n')}\n</svg>\n`;
}

export interface WrittenResults {
  readonly json: string;
  readonly markdown: string;
  readonly svg: string;
}

/** Rewrites the markdown and SVG of a results JSON (after a change of the report's layout). */
export function rerender(jsonFile: string): WrittenResults {
  const r = JSON.parse(readFileSync(jsonFile, 'utf8')) as SuiteResult;
  if (r.schema !== 2)
    throw new Error(
      `${jsonFile} has results schema ${String(r.schema)}; this report renders schema 2 (open-loop runs; the closed-loop 80 % runs of schema 1 are gone)`,
    );
  const base = jsonFile.replace(/\.json$/, '');
  const files = { json: jsonFile, markdown: `${base}.md`, svg: `${base}.svg` };
  writeFileSync(files.svg, svgChart(r));
  writeFileSync(files.markdown, `# Load benchmark ${r.started_at}\n\n${markdownReport(r, `${basename(base)}.svg`)}`);
  return files;
}

/** Writes `<stamp>.json|md|svg` into `dir`; with `prune`, removes older results there. */
export function writeResults(r: SuiteResult, dir: string, prune: boolean): WrittenResults {
  mkdirSync(dir, { recursive: true });
  const base = stamp(r.started_at);
  if (prune) {
    for (const f of readdirSync(dir)) if (/^\d{4}-\d{2}-\d{2}T[\d-]+Z\.(json|md|svg)$/.test(f) && !f.startsWith(base)) rmSync(join(dir, f));
  }
  const files = { json: join(dir, `${base}.json`), markdown: join(dir, `${base}.md`), svg: join(dir, `${base}.svg`) };
  writeFileSync(files.json, `${JSON.stringify(r, null, 1)}\n`);
  writeFileSync(files.svg, svgChart(r));
  writeFileSync(files.markdown, `# Load benchmark ${r.started_at}\n\n${markdownReport(r, `${base}.svg`)}`);
  return files;
}
