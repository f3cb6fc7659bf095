/**
 * @module What a benchmark-only answer was priced from: an answer that lacks plan data for its state and
 * year cites the benchmark table it used with that table's own vintage, never another file's date.
 */
import { basename } from 'node:path';
import type { BuildManifest } from '../engine/manifest.ts';

export const BENCHMARK_DATA = {
  type: ['object', 'null'],
  description:
    'The published benchmark table the premiums were priced from, when they were (benchmark_source benchmark_only or modeled); null when issuer rates priced them or there is no benchmark',
  properties: {
    title: { type: 'string', description: 'What the table is and who derived it' },
    file: { type: 'string', description: 'File name of the table as the build read it' },
    url: { type: ['string', 'null'], description: 'Where the table is published' },
    sha256: { type: 'string', description: 'SHA-256 of the file the build read' },
    in_force: {
      type: ['string', 'null'],
      description: 'Effective date (YYYY-MM-DD) of the table’s values the build took: its vintage; null for builds that did not record it',
    },
  },
  required: ['title', 'file', 'url', 'sha256', 'in_force'],
  additionalProperties: false,
} as const;

export interface BenchmarkData {
  readonly title: string;
  readonly file: string;
  readonly url: string | null;
  readonly sha256: string;
  readonly in_force: string | null;
}

const BENCHMARK_INPUT = 'slcsp_benchmarks';
const BY_MANIFEST = new WeakMap<BuildManifest, BenchmarkData | null>();

/** The benchmark table of a build as answers cite it; null when its manifest lists none. */
export function benchmarkDataOf(manifest: BuildManifest): BenchmarkData | null {
  let data = BY_MANIFEST.get(manifest);
  if (data === undefined) {
    const name = manifest.benchmarks?.input ?? BENCHMARK_INPUT;
    const input = manifest.inputs.find((i) => i.name === name);
    data =
      input === undefined
        ? null
        : {
            title: input.title,
            file: basename(input.path),
            url: input.url,
            sha256: input.sha256,
            in_force: manifest.benchmarks?.in_force || null,
          };
    BY_MANIFEST.set(manifest, data);
  }
  return data;
}

/**
 * `data_freshness` of a state without plan data in a year: only the benchmark table answers there, so
 * the table and its vintage are what is cited (a date of the year's plan files would be another
 * source's).
 */
export function benchmarkOnlyFreshness(year: number, state: string, manifest: BuildManifest): string {
  const b = benchmarkDataOf(manifest);
  const file = b === null ? '' : ` ${b.file}`;
  const vintage = b?.in_force ? `, values in force ${b.in_force}` : '';
  return `PY${year} benchmark only, no plan data for ${state}: SLCSP benchmarks${file} (PolicyEngine-US, derived from KFF)${vintage}`;
}
