/**
 * @module Where a search's CPU goes, and what a requests/s target against the ceiling leaves for it.
 *
 * Three servers answer the same search URLs on the same core: the ceiling (bare uWS replaying the
 * recorded bytes), ours with every answer found in the search cache (the pipeline alone: parsing,
 * key, quota, the cache's lookup, headers and the send of the same bytes) and ours computing every
 * search. Per-request CPU (user + system, every thread) splits ours' cost into the pipeline's part
 * over the ceiling and the search with its page; a target of `floor` × the ceiling's requests/s on a
 * saturated core allows ceiling ÷ floor µs a request, so the pipeline leaves the rest for the search.
 * On a pinned, saturated core requests/s are the inverse of CPU per request (bench:cpu prints both
 * ratios side by side), so the split reads the same as the ratio targets.
 */
import { fmtFigure } from './kernel-report.ts';

/** Medians of the timed runs, µs a request. */
export interface CpuPerRequest {
  readonly userUs: number;
  readonly sysUs: number;
}

export interface SearchBudget {
  readonly ceiling: CpuPerRequest;
  readonly cached: CpuPerRequest;
  readonly computed: CpuPerRequest;
  /** The requests/s target, as a share of the ceiling's. */
  readonly floor: number;
  /** µs a request ours' pipeline costs over the ceiling's answer. */
  readonly pipelineUs: number;
  /** µs a request the search and its page cost (computed − cached). */
  readonly searchUs: number;
  /** µs a request the target allows ours in all: the ceiling's ÷ floor. */
  readonly allowedUs: number;
  /** What the target leaves for the search and its page once the pipeline is paid (negative: nothing). */
  readonly searchAllowedUs: number;
}

const total = (c: CpuPerRequest): number => c.userUs + c.sysUs;

export function searchBudget(ceiling: CpuPerRequest, cached: CpuPerRequest, computed: CpuPerRequest, floor: number): SearchBudget {
  const allowedUs = total(ceiling) / floor;
  return {
    ceiling,
    cached,
    computed,
    floor,
    pipelineUs: total(cached) - total(ceiling),
    searchUs: total(computed) - total(cached),
    allowedUs,
    searchAllowedUs: allowedUs - total(cached),
  };
}

/**
 * The report's table and its reading. `hitRate`: the search cache's share of hits during the cached
 * server's timed runs (null when its metrics could not be read), which says how far its row is the
 * pipeline alone.
 */
export function budgetText(b: SearchBudget, hitRate: number | null): string[] {
  const row = (name: string, c: CpuPerRequest): string =>
    `| ${name} | ${fmtFigure(c.userUs)} | ${fmtFigure(c.sysUs)} | ${fmtFigure(total(c))} | ${fmtFigure(total(c) / total(b.ceiling))}× |`;
  const hits = hitRate === null ? 'hit rate not read' : `${(100 * hitRate).toFixed(1)} % hits`;
  const left =
    b.searchAllowedUs <= 0
      ? `nothing: the pipeline alone costs more than the ${fmtFigure(b.allowedUs)} µs the target allows`
      : b.searchUs <= 0
        ? `${fmtFigure(b.searchAllowedUs)} µs, and the computed runs measured no more than the cached ones (runs too short or too noisy to split)`
        : `${fmtFigure(b.searchAllowedUs)} µs, against ${fmtFigure(b.searchUs)} µs measured: the search and its page would have to cost ${fmtFigure(b.searchAllowedUs / b.searchUs)}× what they do`;
  return [
    '| search, per request (medians) | user µs | sys µs | user + sys µs | ÷ ceiling |',
    '|---|---:|---:|---:|---:|',
    row('ceiling (replays the recorded bytes)', b.ceiling),
    row(`ours, every answer from the search cache (${hits}): the pipeline alone`, b.cached),
    row('ours, every search computed', b.computed),
    '',
    `- Ours' pipeline (query, key, quota, lookup, headers, the same send) over the ceiling: ${fmtFigure(b.pipelineUs)} µs a request.`,
    `- The search and its page: ${fmtFigure(b.searchUs)} µs a request.`,
    `- Search ≥ ${b.floor}× the ceiling's requests/s allows ${fmtFigure(b.allowedUs)} µs a request in all; once the pipeline is paid it leaves the search and its page ${left}.`,
  ];
}
