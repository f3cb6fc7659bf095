import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFixture } from '../helpers/fixture-build.ts';
import { openCurrentDataset, type Dataset } from '../../src/engine/dataset.ts';
import { costSharing, estimateOop, HEURISTIC_SCENARIOS, type OopEstimate } from '../../src/engine/oop.ts';
import type { DeductibleSet, PlanVariantRecord, SbcScenario } from '../../src/engine/plan-record.ts';
import { loadRules } from '../../src/engine/rules.ts';

const rules2026 = loadRules(2026);

const cents = (dollars: number): number => Math.round(dollars * 100);

function tiers(individual: number | null): DeductibleSet {
  return {
    individual_tier1: individual,
    individual_tier2: null,
    family_tier1: individual === null ? null : individual * 2,
    family_tier2: null,
    individual_oon: null,
    family_oon: null,
    combined_individual: null,
    combined_family: null,
    family_per_person_tier1: null,
  };
}

const NO_SBC: SbcScenario = { deductible: null, copayment: null, coinsurance: null, limit: null, total: null };

interface PlanOptions {
  deductible?: number | null;
  moop?: number | null;
  coinsurance?: number | null;
  freeVisits?: number | null;
  copayVisits?: number | null;
  baby?: SbcScenario;
  diabetes?: SbcScenario;
}

/** A complete plan record with the cost-sharing fields under test. */
function plan(o: PlanOptions = {}): PlanVariantRecord {
  return {
    id: '12345TX0010001-01',
    standard_component_id: '12345TX0010001',
    variant: '01',
    name: 'Test Silver',
    variant_name: null,
    issuer_id: '12345',
    issuer: 'Test Health',
    state: 'TX',
    metal_level: 'silver',
    plan_type: 'hmo',
    service_area_id: 'TXS001',
    network_id: null,
    formulary_id: null,
    product_id: null,
    csr_variation: 'Standard Silver On Exchange Plan',
    hsa_eligible: false,
    national_network: false,
    child_only: false,
    on_exchange: true,
    is_new_plan: null,
    design_type: null,
    referral_required_for_specialist: false,
    out_of_country_coverage: false,
    out_of_service_area_coverage: false,
    ehb_percent_premium: 1,
    medical_drug_deductibles_integrated: true,
    medical_drug_moop_integrated: true,
    deductible: tiers(o.deductible === undefined ? 1_500 : o.deductible),
    drug_deductible: null,
    max_out_of_pocket: tiers(o.moop === undefined ? 9_200 : o.moop),
    coinsurance_tier1: o.coinsurance === undefined ? 0.2 : o.coinsurance,
    primary_care: {
      cost_sharing_after_visits: o.freeVisits ?? null,
      deductible_coinsurance_after_copays: o.copayVisits ?? null,
    },
    sbc_scenarios: { having_baby: o.baby ?? NO_SBC, having_diabetes: o.diabetes ?? NO_SBC, simple_fracture: NO_SBC },
    links: { benefits_summary: null, brochure: null, formulary: null, provider_directory: null },
    source_name: null,
    import_date: null,
  };
}

/** The invariants every response must meet, checked in cents. */
function assertReconciles(e: OopEstimate): void {
  const b = e.breakdown;
  assert.equal(
    cents(b.estimated_out_of_pocket),
    cents(b.deductible_applied) + cents(b.copay_applied) + cents(b.coinsurance_applied) + cents(b.limits_or_exclusions),
    'estimated_out_of_pocket = deductible + copay + coinsurance + limits',
  );
  assert.equal(cents(b.annual_premium), 12 * cents(e.monthly_premium));
  assert.equal(cents(e.estimated_annual_cost), cents(b.annual_premium) + cents(b.estimated_out_of_pocket));
}

describe('SBC coverage examples (domain.md §9)', () => {
  test('worked example: Having a Baby 1,500 + 10 + 3,300 + 60 = 4,870', () => {
    const p = plan({ baby: { deductible: 1_500, copayment: 10, coinsurance: 3_300, limit: 60, total: 4_870 } });
    // The annual cost's formula (docs/compatibility.md#out-of-pocket-estimate) on a worked example:
    // $812.44 a month → 12 × 812.44 = 9,749.28; + 4,870 = 14,619.28.
    const e = estimateOop(p, 812.44, 'having_baby', rules2026);
    assert.equal(e.sbc_data_available, true);
    assert.deepEqual(e.breakdown, {
      annual_premium: 9_749.28,
      estimated_out_of_pocket: 4_870,
      deductible_applied: 1_500,
      coinsurance_applied: 3_300,
      copay_applied: 10,
      limits_or_exclusions: 60,
    });
    assert.equal(e.estimated_annual_cost, 14_619.28);
    assert.equal(e.notes[0], "Uses the plan's SBC coverage example 'Having a Baby' (in-network, self-only).");
    assertReconciles(e);
  });

  test('Managing Type 2 Diabetes sums the four members too', () => {
    const p = plan({ diabetes: { deductible: 1_500, copayment: 400, coinsurance: 200, limit: 20, total: 2_120 } });
    const e = estimateOop(p, 300, 'having_diabetes', rules2026);
    // 1,500 + 400 + 200 + 20 = 2,120; premium 12 × 300 = 3,600.
    assert.equal(e.breakdown.estimated_out_of_pocket, 2_120);
    assert.equal(e.estimated_annual_cost, 5_720);
    assertReconciles(e);
  });

  test('no SBC values: falls back to the heuristic on the example total, and says so', () => {
    const e = estimateOop(plan(), 300, 'having_baby', rules2026);
    assert.equal(e.sbc_data_available, false);
    // $12,700 example, D = 1,500, c = 20 %: 1,500 + 0.2 × 11,200 = 3,740.
    assert.equal(e.breakdown.deductible_applied, 1_500);
    assert.equal(e.breakdown.coinsurance_applied, 2_240);
    assert.equal(e.breakdown.estimated_out_of_pocket, 3_740);
    assert.equal(e.breakdown.limits_or_exclusions, 0);
    assert.ok(e.notes.some((n) => /no SBC values/.test(n)));
    assertReconciles(e);
  });
});

describe('heuristic (domain.md §10.2)', () => {
  test('closed form, worked example: D 1,500, c 20 %, MOOP 9,200, two $30 copays before the deductible', () => {
    // Medium: min(9,200, 60 + 1,500 + 0.20 × 2,500) = 2,060.
    const medium = costSharing({
      deductible: 1_500,
      coinsurance: 0.2,
      moop: 9_200,
      copaysBeforeDeductible: 60,
      spendSubjectToDeductible: 4_000,
    });
    assert.equal(medium.totalCents, 206_000);
    assert.deepEqual([medium.copayCents, medium.deductibleCents, medium.coinsuranceCents], [6_000, 150_000, 50_000]);
    assert.equal(medium.capped, false);
    // High: 60 + 1,500 + 0.20 × 58,500 = 13,260 → capped at 9,200; the cut comes off coinsurance.
    const high = costSharing({
      deductible: 1_500,
      coinsurance: 0.2,
      moop: 9_200,
      copaysBeforeDeductible: 60,
      spendSubjectToDeductible: 60_000,
    });
    assert.equal(high.uncappedCents, 1_326_000);
    assert.equal(high.totalCents, 920_000);
    assert.deepEqual([high.copayCents, high.deductibleCents, high.coinsuranceCents], [6_000, 150_000, 764_000]);
    assert.equal(high.capped, true);
  });

  test('the documented scenario figures', () => {
    assert.deepEqual(HEURISTIC_SCENARIOS.low, { percentile: 'about the 30th percentile', pcpVisits: 2, pcpVisitCost: 150, otherCare: 300 });
    assert.deepEqual(HEURISTIC_SCENARIOS.medium, {
      percentile: 'about the 55th percentile',
      pcpVisits: 3,
      pcpVisitCost: 150,
      otherCare: 2_050,
    });
    assert.deepEqual(HEURISTIC_SCENARIOS.high, {
      percentile: 'about the 90th–95th percentile',
      pcpVisits: 6,
      pcpVisitCost: 150,
      otherCare: 24_100,
    });
  });

  test('plan with two copays before the deductible (assumed $30 each), D 1,500, 20 %, MOOP 9,200', () => {
    const p = plan({ copayVisits: 2 });
    const low = estimateOop(p, 400, 'low', rules2026);
    // Low: 2 visits, both copays = 60; remaining 300 of other care within the deductible → 60 + 300 = 360.
    assert.deepEqual([low.breakdown.copay_applied, low.breakdown.deductible_applied, low.breakdown.coinsurance_applied], [60, 300, 0]);
    assert.equal(low.breakdown.estimated_out_of_pocket, 360);
    // Medium: 3 visits: 2 copays (60) + 1 visit (150) + 2,050 → S = 2,200: 1,500 + 0.2 × 700 = 140 → 1,700.
    const medium = estimateOop(p, 400, 'medium', rules2026);
    assert.deepEqual(
      [medium.breakdown.copay_applied, medium.breakdown.deductible_applied, medium.breakdown.coinsurance_applied],
      [60, 1_500, 140],
    );
    assert.equal(medium.breakdown.estimated_out_of_pocket, 1_700);
    // High: 6 visits: 2 copays (60) + 4 × 150 + 24,100 → S = 24,700: 1,500 + 0.2 × 23,200 = 4,640 → 6,200.
    const high = estimateOop(p, 400, 'high', rules2026);
    assert.equal(high.breakdown.coinsurance_applied, 4_640);
    assert.equal(high.breakdown.estimated_out_of_pocket, 6_200);
    // 12 × 400 = 4,800 premium.
    assert.equal(high.estimated_annual_cost, 11_000);
    for (const e of [low, medium, high]) {
      assert.equal(e.sbc_data_available, false);
      assert.equal(e.breakdown.limits_or_exclusions, 0);
      assert.ok(
        e.notes.some((n) => /Modeled estimate/.test(n) && /MEPS/.test(n)),
        'marked as modeled',
      );
      assert.ok(e.notes.some((n) => /\$30 each is assumed/.test(n)));
      assertReconciles(e);
    }
  });

  test('free primary-care visits before cost sharing', () => {
    // Medium: 3 visits, the first free; 2 × 150 + 2,050 = 2,350: 1,500 + 0.2 × 850 = 170 → 1,670.
    const e = estimateOop(plan({ freeVisits: 1 }), 400, 'medium', rules2026);
    assert.equal(e.breakdown.copay_applied, 0);
    assert.equal(e.breakdown.estimated_out_of_pocket, 1_670);
    assert.ok(e.notes.some((n) => /first primary-care visit with no cost sharing/.test(n)));
  });

  test('no coinsurance → 20 % (noted); no MOOP → the year’s legal maximum (noted) and the cap holds', () => {
    const p = plan({ deductible: 9_000, moop: null, coinsurance: null });
    const e = estimateOop(p, 250, 'high', rules2026);
    // S = 6 × 150 + 24,100 = 25,000: 9,000 + 0.2 × 16,000 = 12,200 → capped at the 2026 legal 10,600.
    assert.equal(e.breakdown.estimated_out_of_pocket, 10_600);
    assert.equal(e.breakdown.deductible_applied, 9_000);
    assert.equal(e.breakdown.coinsurance_applied, 1_600);
    assert.ok(e.notes.some((n) => /no coinsurance rate; 20 % is assumed/.test(n)));
    assert.ok(e.notes.some((n) => /2026 legal maximum of \$10,600/.test(n)));
    assertReconciles(e);
  });
});

describe('every plan record of the fixture', () => {
  let dir: string;
  let ds: Dataset;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hpd-oop-'));
    ds = openCurrentDataset(await buildFixture(dir), 2025);
  });
  after(() => {
    ds?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('low ≤ medium ≤ high ≤ MOOP, and every breakdown reconciles', () => {
    let checked = 0;
    for (const scid of ds.planIds()) {
      for (const v of ['00', '01', '02', '03', '04', '05', '06']) {
        const rec = ds.planRecord(`${scid}-${v}`);
        if (rec === undefined) continue;
        checked++;
        const [low, medium, high] = (['low', 'medium', 'high'] as const).map((s) => estimateOop(rec, 321.45, s, loadRules(2025)));
        const oop = (e: OopEstimate): number => cents(e.breakdown.estimated_out_of_pocket);
        assert.ok(oop(low!) <= oop(medium!), `${rec.id}: low ≤ medium`);
        assert.ok(oop(medium!) <= oop(high!), `${rec.id}: medium ≤ high`);
        const moop = rec.max_out_of_pocket.individual_tier1 ?? 9_200;
        assert.ok(oop(high!) <= cents(moop), `${rec.id}: high ≤ MOOP`);
        for (const e of [low!, medium!, high!]) assertReconciles(e);
        // Fixture SBC: baby 1,500 + 10 + 3,300 + 60 = 4,870; diabetes 1,500 + 400 + 200 + 20 = 2,120.
        const baby = estimateOop(rec, 321.45, 'having_baby', rules2026);
        assert.equal(baby.breakdown.estimated_out_of_pocket, 4_870);
        assert.equal(baby.sbc_data_available, true);
        const diabetes = estimateOop(rec, 321.45, 'having_diabetes', rules2026);
        assert.equal(diabetes.breakdown.estimated_out_of_pocket, 2_120);
        for (const e of [baby, diabetes]) assertReconciles(e);
      }
    }
    // 13 plans: 12 on exchange (+ -00 each) and 1 off-exchange only, silver ones with three CSR variants.
    assert.ok(checked > 13, `checked ${checked} records`);
  });

  test('a high-use year reaches the MOOP of the fixture plan with a $4,500 deductible', () => {
    const rec = ds.planRecord('11111TX0010001-01')!;
    // S = 6 × 150 + 24,100 = 25,000: 4,500 + 0.2 × 20,500 = 8,600 ≤ 9,200, so not capped.
    assert.equal(estimateOop(rec, 0, 'high', rules2026).breakdown.estimated_out_of_pocket, 8_600);
    // Its -06 CSR variant (deductible $500): 500 + 0.2 × 24,500 = 5,400.
    assert.equal(estimateOop(ds.planRecord('11111TX0010001-06')!, 0, 'high', rules2026).breakdown.estimated_out_of_pocket, 5_400);
  });
});
