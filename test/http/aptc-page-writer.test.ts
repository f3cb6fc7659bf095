/**
 * The APTC estimate as the REST front writes it (bytes straight from the page model) against what the
 * response schema's serializer makes of the model's objects (what the front wrote before, and what MCP
 * gets): the body and the Link header must be the same bytes, for every kind of estimate — eligible or
 * not, the three-child rule, no plan data (published benchmark), no benchmark, aliases and counties.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ehbNoteText } from '../../src/engine/subsidy.ts';
import { writeAptcPage } from '../../src/http/aptc-page-writer.ts';
import { ByteWriter } from '../../src/encoding/byte-writer.ts';
import { linkHeader } from '../../src/http/conditional.ts';
import { compileSerializer } from '../../src/http/serializers.ts';
import { AptcPageModel } from '../../src/operations/aptc-page.ts';
import { type DataRegistry, openRegistry } from '../../src/operations/data-registry.ts';
import { APTC_RESPONSE, estimateAptcOperation } from '../../src/operations/estimate-aptc.ts';
import { execute } from '../../src/operations/operation.ts';
import { inScratch } from '../helpers/run-operation.ts';
import { buildFixture } from '../helpers/fixture-build.ts';
import { FIXTURE_ZIPS } from '../helpers/fixture-inputs.ts';

const BASE = 'http://api.test';
const SERVICE_DESC = `${BASE}/v1/openapi.json`;
const serialize = compileSerializer(APTC_RESPONSE);
let dir: string;
let registry: DataRegistry;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hpd-aptc-writer-'));
  registry = openRegistry(await buildFixture(dir), BASE);
});
after(() => {
  registry?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('writeAptcPage', () => {
  it('writes the bytes the serializer makes of the objects, for every kind of estimate', () => {
    const body = new ByteWriter(32);
    const link = new ByteWriter(8);
    const { harris, split, anchorage, honolulu } = FIXTURE_ZIPS;
    const queries = [
      `zip=${harris}&household_income=30000&household_size=1&ages=40`,
      `zip=${harris}&income=52000.5&household_size=6&ages=40,38,16,12,9,5`,
      `zip=${harris}&household_income=5000&household_size=2&ages=30,2`,
      `zip=${harris}&household_income=900000&household_size=1&ages=64`,
      `zip=${harris}&household_income=0&household_size=1&ages=0`,
      `zip=${split}&county_fips=48201&household_income=41000&household_size=3&ages=45&ages=44&ages=20`,
      `zip=${anchorage}&household_income=61000&household_size=2&ages=50,49`,
      `zip=${honolulu}&household_income=45000&household_size=1&ages=33`,
      `zip=${harris}&household_income=30000&household_size=1&ages=40&year=2025`,
    ];
    let written = 0;
    for (const q of queries) {
      const done = inScratch((scratch) => {
        const r = execute(estimateAptcOperation, { registry, baseUrl: BASE }, 'enterprise', [...new URLSearchParams(q)], {}, scratch);
        if (!r.ok) {
          assert.equal(r.problem.kind, 'notFound', `${q}: ${JSON.stringify(r.problem)}`);
          return false;
        }
        assert.ok(r.model instanceof AptcPageModel, q);
        writeAptcPage(r.model, body, link, SERVICE_DESC);
        const objects = r.model.toBody();
        assert.equal(body.view().toString('utf8'), serialize(objects), q);
        assert.equal(link.view().toString('utf8'), linkHeader(objects._links, SERVICE_DESC), q);
        return true;
      });
      if (done) written++;
    }
    assert.ok(written >= queries.length - 1, `${written} estimates written`);
  });

  it('writes the note on the benchmark EHB share from its figures as ehbNoteText words it, after the other notes', () => {
    const body = new ByteWriter(32);
    const link = new ByteWriter(8);
    // Shares and amounts round, with one and two decimals and none, zero, and a fraction of a cent (toFixed).
    const figures: Array<[number, number, number]> = [
      [99.43, 41_237, 41_474],
      [90, 0, 5],
      [85.5, 1005, 100_000],
      [99.9, 7, 12_345_678],
      [97.12, 1234.5, 1270],
    ];
    for (const q of [
      `zip=${FIXTURE_ZIPS.harris}&household_income=30000&household_size=1&ages=40`,
      `zip=${FIXTURE_ZIPS.harris}&household_income=900000&household_size=1&ages=64`,
    ]) {
      for (const [percent, ehbCents, benchmarkCents] of figures) {
        inScratch((scratch) => {
          const r = execute(estimateAptcOperation, { registry, baseUrl: BASE }, 'enterprise', [...new URLSearchParams(q)], {}, scratch);
          assert.ok(r.ok && r.model instanceof AptcPageModel, q);
          const est = r.model.est;
          est.ehbNotePercent = percent;
          est.ehbNoteCents = ehbCents;
          est.benchmarkCents = benchmarkCents;
          writeAptcPage(r.model, body, link, SERVICE_DESC);
          const objects = r.model.toBody();
          const notes = objects.notes as string[];
          assert.equal(notes.at(-1), ehbNoteText(percent, ehbCents, benchmarkCents));
          assert.equal(notes.length, est.leadingNotes.length + 1);
          assert.equal(body.view().toString('utf8'), serialize(objects), `${q} ${percent} ${ehbCents} ${benchmarkCents}`);
        });
      }
    }
  });
});
