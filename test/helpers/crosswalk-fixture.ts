/**
 * @module The fixture dataset plus a PY2025 → PY2026 Plan ID Crosswalk PUF in the official 24-column
 * format (shared/data/README.md §7.3), added to the sources file as an optional `crosswalk` input.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvLine, writeFixtureInputs } from './fixture-inputs.ts';
import { buildFixtureInputs } from './fixture-build.ts';

export const CROSSWALK_HEADER = [
  'State',
  'DentalPlan',
  'PlanID_2025',
  'IssuerID_2025',
  'MultistatePlan_2025',
  'MetalLevel_2025',
  'ChildAdultOnly_2025',
  'FIPSCode',
  'ZipCode',
  'CrosswalkLevel',
  'ReasonForCrosswalk',
  'PlanID_2026',
  'IssuerID_2026',
  'MultistatePlan_2026',
  'MetalLevel_2026',
  'ChildAdultOnly_2026',
  'AgeOffPlanID_2026',
  'IssuerID_AgeOff2026',
  'MultistatePlan_AgeOff2026',
  'MetalLevel_AgeOff2026',
  'ChildAdultOnly_AgeOff2026',
  'ReasonForBronzeToSilverCrosswalk',
  'SilverCSREligPlanID_2026',
  'SilverCSREligIssuerID_2026',
] as const;

export interface CrosswalkFixtureRow {
  readonly state: string;
  readonly source: string;
  readonly metal: string;
  readonly fips: string;
  readonly level: number;
  readonly reason: number;
  /** `00000XX0000000` for a discontinuation without replacement. */
  readonly target: string;
  readonly zip?: string;
}

/** The rows of the fixture crosswalk: one per (source plan, county). */
export const CROSSWALK_ROWS: readonly CrosswalkFixtureRow[] = [
  // Renewed with the same id, in both counties of its service area.
  { state: 'TX', source: '11111TX0010001', metal: 'Silver', fips: '48201', level: 0, reason: 0, target: '11111TX0010001' },
  { state: 'TX', source: '11111TX0010001', metal: 'Silver', fips: '48157', level: 0, reason: 0, target: '11111TX0010001' },
  // Discontinued, enrollees crosswalked into another plan.
  { state: 'TX', source: '11111TX0010002', metal: 'Silver', fips: '48201', level: 1, reason: 2, target: '11111TX0010001' },
  // Discontinued without replacement (sentinel target).
  { state: 'TX', source: '11111TX0010003', metal: 'Bronze', fips: '48201', level: 4, reason: 3, target: '00000XX0000000' },
  { state: 'TX', source: '11111TX0010003', metal: 'Bronze', fips: '48157', level: 4, reason: 3, target: '00000XX0000000' },
  // Targets by county: 22222TX0020005 in one county (lowest id), 22222TX0020009 in two (most counties).
  { state: 'TX', source: '22222TX0020001', metal: 'Silver', fips: '48201', level: 2, reason: 6, target: '22222TX0020005' },
  { state: 'TX', source: '22222TX0020001', metal: 'Silver', fips: '48157', level: 2, reason: 6, target: '22222TX0020009' },
  { state: 'TX', source: '22222TX0020001', metal: 'Silver', fips: '48339', level: 2, reason: 6, target: '22222TX0020009' },
  // A tie on counties goes to the lowest target id.
  { state: 'TX', source: '22222TX0020002', metal: 'Expanded Bronze', fips: '48201', level: 2, reason: 10, target: '22222TX0020008' },
  { state: 'TX', source: '22222TX0020002', metal: 'Expanded Bronze', fips: '48157', level: 2, reason: 10, target: '22222TX0020007' },
  // Another covered state.
  { state: 'AK', source: '44444AK0040001', metal: 'Silver', fips: '02020', level: 0, reason: 0, target: '44444AK0040001' },
];

export function crosswalkCsv(rows: readonly CrosswalkFixtureRow[] = CROSSWALK_ROWS): string {
  const lines = [CROSSWALK_HEADER.join(',')];
  for (const r of rows) {
    const discontinued = r.target === '00000XX0000000';
    const v: Record<string, string> = {
      State: r.state,
      DentalPlan: 'N',
      PlanID_2025: r.source,
      IssuerID_2025: r.source.slice(0, 5),
      MultistatePlan_2025: 'N',
      MetalLevel_2025: r.metal,
      ChildAdultOnly_2025: '0',
      FIPSCode: r.fips,
      ZipCode: r.zip ?? '00000',
      CrosswalkLevel: String(r.level),
      ReasonForCrosswalk: String(r.reason),
      PlanID_2026: r.target,
      IssuerID_2026: discontinued ? '00000' : r.target.slice(0, 5),
      MultistatePlan_2026: discontinued ? '' : 'N',
      MetalLevel_2026: discontinued ? '' : r.metal,
      ChildAdultOnly_2026: discontinued ? '' : '0',
    };
    lines.push(csvLine(CROSSWALK_HEADER.map((c) => v[c] ?? '')));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** Builds the 2025 fixture with the crosswalk into `dir/builds` and returns the builds root. */
export async function buildCrosswalkFixture(dir: string): Promise<string> {
  const f = writeFixtureInputs(join(dir, 'in'));
  const path = join(f.dir, 'plan-id-crosswalk-puf.csv');
  writeFileSync(path, crosswalkCsv());
  const sources = JSON.parse(readFileSync(f.sourcesFile, 'utf8')) as { year: number; inputs: Record<string, unknown> };
  sources.inputs.crosswalk = {
    title: 'crosswalk',
    required: false,
    url: 'http://127.0.0.1:9/plan-id-crosswalk-puf.zip',
    url_sha256: null,
    mirrors: [{ path }],
  };
  writeFileSync(f.sourcesFile, JSON.stringify(sources, null, 2));
  await buildFixtureInputs(dir, 2025, f.sourcesFile);
  return join(dir, 'builds');
}
