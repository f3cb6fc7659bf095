/**
 * @module Tests of the Plan Attributes PUF loader: files written here in the official 151-column layout (and
 * reordered, zipped, with BOM/CRLF, with quoted multi-line fields), one test per diagnostic path, and the real
 * PY2025 file from the shared data folder.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadPlanAttributes } from '../../../build/puf/plan-attributes.ts';
import { createProgress } from '../../../build/progress.ts';
import { DIAGNOSTIC_CODES, DiagnosticSink, FatalBuildError, formatDiagnostic } from '../../../build/read/diagnostics.ts';
import { openTable } from '../../../build/read/table.ts';
import { makeZip } from '../../helpers/zip-writer.ts';

const REAL_FILE = '/work/shared/data/cms/py2025/plan-attributes-puf.zip';

/** The exact PY2025 header (shared/data/README.md §4.1). */
const OFFICIAL_HEADER =
  'BusinessYear,StateCode,IssuerId,IssuerMarketPlaceMarketingName,SourceName,ImportDate,MarketCoverage,DentalOnlyPlan,StandardComponentId,PlanMarketingName,HIOSProductId,NetworkId,ServiceAreaId,FormularyId,IsNewPlan,PlanType,MetalLevel,DesignType,UniquePlanDesign,QHPNonQHPTypeId,IsNoticeRequiredForPregnancy,IsReferralRequiredForSpecialist,SpecialistRequiringReferral,PlanLevelExclusions,IndianPlanVariationEstimatedAdvancedPaymentAmountPerEnrollee,CompositeRatingOffered,ChildOnlyOffering,ChildOnlyPlanId,WellnessProgramOffered,DiseaseManagementProgramsOffered,EHBPercentTotalPremium,EHBPediatricDentalApportionmentQuantity,IsGuaranteedRate,PlanEffectiveDate,PlanExpirationDate,OutOfCountryCoverage,OutOfCountryCoverageDescription,OutOfServiceAreaCoverage,OutOfServiceAreaCoverageDescription,NationalNetwork,URLForEnrollmentPayment,FormularyURL,PlanId,PlanVariantMarketingName,CSRVariationType,IssuerActuarialValue,AVCalculatorOutputNumber,MedicalDrugDeductiblesIntegrated,MedicalDrugMaximumOutofPocketIntegrated,MultipleInNetworkTiers,FirstTierUtilization,SecondTierUtilization,SBCHavingaBabyDeductible,SBCHavingaBabyCopayment,SBCHavingaBabyCoinsurance,SBCHavingaBabyLimit,SBCHavingDiabetesDeductible,SBCHavingDiabetesCopayment,SBCHavingDiabetesCoinsurance,SBCHavingDiabetesLimit,SBCHavingSimplefractureDeductible,SBCHavingSimplefractureCopayment,SBCHavingSimplefractureCoinsurance,SBCHavingSimplefractureLimit,SpecialtyDrugMaximumCoinsurance,InpatientCopaymentMaximumDays,BeginPrimaryCareCostSharingAfterNumberOfVisits,BeginPrimaryCareDeductibleCoinsuranceAfterNumberOfCopays,MEHBInnTier1IndividualMOOP,MEHBInnTier1FamilyPerPersonMOOP,MEHBInnTier1FamilyPerGroupMOOP,MEHBInnTier2IndividualMOOP,MEHBInnTier2FamilyPerPersonMOOP,MEHBInnTier2FamilyPerGroupMOOP,MEHBOutOfNetIndividualMOOP,MEHBOutOfNetFamilyPerPersonMOOP,MEHBOutOfNetFamilyPerGroupMOOP,MEHBCombInnOonIndividualMOOP,MEHBCombInnOonFamilyPerPersonMOOP,MEHBCombInnOonFamilyPerGroupMOOP,DEHBInnTier1IndividualMOOP,DEHBInnTier1FamilyPerPersonMOOP,DEHBInnTier1FamilyPerGroupMOOP,DEHBInnTier2IndividualMOOP,DEHBInnTier2FamilyPerPersonMOOP,DEHBInnTier2FamilyPerGroupMOOP,DEHBOutOfNetIndividualMOOP,DEHBOutOfNetFamilyPerPersonMOOP,DEHBOutOfNetFamilyPerGroupMOOP,DEHBCombInnOonIndividualMOOP,DEHBCombInnOonFamilyPerPersonMOOP,DEHBCombInnOonFamilyPerGroupMOOP,TEHBInnTier1IndividualMOOP,TEHBInnTier1FamilyPerPersonMOOP,TEHBInnTier1FamilyPerGroupMOOP,TEHBInnTier2IndividualMOOP,TEHBInnTier2FamilyPerPersonMOOP,TEHBInnTier2FamilyPerGroupMOOP,TEHBOutOfNetIndividualMOOP,TEHBOutOfNetFamilyPerPersonMOOP,TEHBOutOfNetFamilyPerGroupMOOP,TEHBCombInnOonIndividualMOOP,TEHBCombInnOonFamilyPerPersonMOOP,TEHBCombInnOonFamilyPerGroupMOOP,MEHBDedInnTier1Individual,MEHBDedInnTier1FamilyPerPerson,MEHBDedInnTier1FamilyPerGroup,MEHBDedInnTier1Coinsurance,MEHBDedInnTier2Individual,MEHBDedInnTier2FamilyPerPerson,MEHBDedInnTier2FamilyPerGroup,MEHBDedInnTier2Coinsurance,MEHBDedOutOfNetIndividual,MEHBDedOutOfNetFamilyPerPerson,MEHBDedOutOfNetFamilyPerGroup,MEHBDedCombInnOonIndividual,MEHBDedCombInnOonFamilyPerPerson,MEHBDedCombInnOonFamilyPerGroup,DEHBDedInnTier1Individual,DEHBDedInnTier1FamilyPerPerson,DEHBDedInnTier1FamilyPerGroup,DEHBDedInnTier1Coinsurance,DEHBDedInnTier2Individual,DEHBDedInnTier2FamilyPerPerson,DEHBDedInnTier2FamilyPerGroup,DEHBDedInnTier2Coinsurance,DEHBDedOutOfNetIndividual,DEHBDedOutOfNetFamilyPerPerson,DEHBDedOutOfNetFamilyPerGroup,DEHBDedCombInnOonIndividual,DEHBDedCombInnOonFamilyPerPerson,DEHBDedCombInnOonFamilyPerGroup,TEHBDedInnTier1Individual,TEHBDedInnTier1FamilyPerPerson,TEHBDedInnTier1FamilyPerGroup,TEHBDedInnTier1Coinsurance,TEHBDedInnTier2Individual,TEHBDedInnTier2FamilyPerPerson,TEHBDedInnTier2FamilyPerGroup,TEHBDedInnTier2Coinsurance,TEHBDedOutOfNetIndividual,TEHBDedOutOfNetFamilyPerPerson,TEHBDedOutOfNetFamilyPerGroup,TEHBDedCombInnOonIndividual,TEHBDedCombInnOonFamilyPerPerson,TEHBDedCombInnOonFamilyPerGroup,IsHSAEligible,HSAOrHRAEmployerContribution,HSAOrHRAEmployerContributionAmount,URLForSummaryofBenefitsCoverage,PlanBrochure'.split(
    ',',
  );

type Row = Record<string, string>;

/** A valid individual medical silver variant; `n` makes the plan id unique. */
function planRow(n: number, over: Row = {}): Row {
  const scid = `12345TX${String(n).padStart(7, '0')}`;
  return {
    BusinessYear: '2025',
    StateCode: 'TX',
    IssuerId: '12345',
    IssuerMarketPlaceMarketingName: ' Acme   Health ',
    SourceName: 'HIOS',
    ImportDate: '2024-11-20 01:02:03',
    MarketCoverage: 'Individual',
    DentalOnlyPlan: 'No',
    StandardComponentId: scid,
    PlanMarketingName: `Acme Silver ${n}`,
    HIOSProductId: scid.slice(0, 10),
    NetworkId: 'TXN001',
    ServiceAreaId: 'TXS001',
    FormularyId: 'TXF001',
    IsNewPlan: 'Existing',
    PlanType: 'HMO',
    MetalLevel: 'Silver',
    DesignType: 'Not Applicable',
    QHPNonQHPTypeId: 'Both',
    ChildOnlyOffering: 'Allows Adult and Child-Only',
    EHBPercentTotalPremium: '1.0',
    PlanEffectiveDate: '2025-01-01',
    OutOfCountryCoverage: 'No',
    OutOfServiceAreaCoverage: 'No',
    NationalNetwork: 'No',
    FormularyURL: 'www.acme.example/formulary',
    PlanId: `${scid}-01`,
    PlanVariantMarketingName: `Acme Silver ${n} On Exchange`,
    CSRVariationType: 'Standard Silver On Exchange Plan',
    AVCalculatorOutputNumber: '0.7001186159724491',
    MedicalDrugDeductiblesIntegrated: 'Yes',
    MedicalDrugMaximumOutofPocketIntegrated: 'Yes',
    SBCHavingaBabyDeductible: '$1,500',
    SBCHavingaBabyCopayment: '$10',
    SBCHavingaBabyCoinsurance: '$3,300',
    SBCHavingaBabyLimit: '$60',
    SBCHavingDiabetesDeductible: '$1,500',
    SBCHavingDiabetesCopayment: '$400',
    SBCHavingDiabetesCoinsurance: '$200',
    SBCHavingDiabetesLimit: '$20',
    SBCHavingSimplefractureDeductible: '$1,500',
    SBCHavingSimplefractureCopayment: '$200',
    SBCHavingSimplefractureCoinsurance: '$500',
    SBCHavingSimplefractureLimit: '$0',
    BeginPrimaryCareCostSharingAfterNumberOfVisits: '0',
    BeginPrimaryCareDeductibleCoinsuranceAfterNumberOfCopays: '3.0',
    TEHBInnTier1IndividualMOOP: '$9,200',
    TEHBInnTier1FamilyPerPersonMOOP: '$9200 per person',
    TEHBInnTier1FamilyPerGroupMOOP: '$18400 per group',
    TEHBInnTier2IndividualMOOP: 'Not Applicable',
    TEHBOutOfNetIndividualMOOP: 'Not Applicable',
    TEHBOutOfNetFamilyPerGroupMOOP: 'per group not applicable',
    TEHBDedInnTier1Individual: '$1,500',
    TEHBDedInnTier1FamilyPerPerson: '$1500 per person',
    TEHBDedInnTier1FamilyPerGroup: '$3000 per group',
    TEHBDedInnTier1Coinsurance: '20.00%',
    TEHBDedInnTier2Individual: 'Not Applicable',
    TEHBDedOutOfNetIndividual: 'Not Applicable',
    TEHBDedOutOfNetFamilyPerGroup: 'per group not applicable',
    TEHBDedCombInnOonIndividual: '$3,000',
    TEHBDedCombInnOonFamilyPerGroup: '$6000 per group',
    IsHSAEligible: 'No',
    URLForSummaryofBenefitsCoverage: `https://acme.example/sbc/${scid}-01.pdf`,
    PlanBrochure: 'N/A',
    ...over,
  };
}

function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

function toCsv(header: readonly string[], rows: readonly Row[], opts: { bom?: boolean; eol?: string } = {}): string {
  const eol = opts.eol ?? '\r\n';
  const lines = [header.map(csvField).join(','), ...rows.map((r) => header.map((c) => csvField(r[c] ?? '')).join(','))];
  return `${opts.bom === false ? '' : '\uFEFF'}${lines.join(eol)}${eol}`;
}

function rows(n: number, from = 1): Row[] {
  return Array.from({ length: n }, (_, i) => planRow(from + i));
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hpd-pa-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let serial = 0;

function writeFile(content: string | Buffer, ext = 'csv'): string {
  const file = path.join(dir, `pa-${++serial}.${ext}`);
  fs.writeFileSync(file, content);
  return file;
}

const quiet = () => createProgress({ tty: false, quiet: true });

async function load(file: string, year = 2025, displayName?: string) {
  const sink = new DiagnosticSink();
  const table = await openTable(file, displayName);
  const result = await loadPlanAttributes(table, year, sink, quiet());
  return { sink, result, file: table.file };
}

/** 1-based column of a name in the official header. */
const col = (name: string): number => OFFICIAL_HEADER.indexOf(name) + 1;

describe('loadPlanAttributes: file layout', () => {
  it('gives identical records whatever the column order', async () => {
    const data = [
      ...rows(5),
      planRow(6, { MedicalDrugDeductiblesIntegrated: 'No', MEHBDedInnTier1Individual: '$1,000', DEHBDedInnTier1Individual: '$250' }),
    ];
    const shuffled = [...OFFICIAL_HEADER];
    // Deterministic shuffle (LCG), so a failure reproduces.
    let seed = 7;
    for (let i = shuffled.length - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const j = seed % (i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    assert.notDeepEqual(shuffled, OFFICIAL_HEADER);
    const a = await load(writeFile(toCsv(OFFICIAL_HEADER, data)), 2025, 'pa.csv');
    const b = await load(writeFile(toCsv(shuffled, data)), 2025, 'pa.csv');
    assert.equal(a.result.variants.size, 6);
    assert.deepEqual(b.result.variants, a.result.variants);
    assert.equal(b.result.newestImport, a.result.newestImport);
    assert.equal(a.sink.warningCount, 0);
    assert.equal(b.sink.warningCount, 0);
    const v6 = a.result.variants.get('12345TX0000006-01')!;
    assert.equal(v6.deductible.individual_tier1, 1000);
    assert.equal(v6.drug_deductible?.individual_tier1, 250);
  });

  it('reads a BOM + CRLF file: header found, values parsed, lines counted once per CRLF', async () => {
    const data = [...rows(99), planRow(200, { MetalLevel: 'Diamond' })];
    const text = toCsv(OFFICIAL_HEADER, data, { bom: true, eol: '\r\n' });
    assert.ok(text.startsWith('\uFEFFBusinessYear,'));
    const { sink, result } = await load(writeFile(text), 2025, 'bom.csv');
    assert.equal(result.variants.size, 99);
    const v = result.variants.get('12345TX0000001-01')!;
    assert.equal(v.name, 'Acme Silver 1');
    assert.equal(v.issuer, 'Acme Health');
    assert.equal(v.links.benefits_summary, 'https://acme.example/sbc/12345TX0000001-01.pdf');
    assert.equal(v.links.brochure, null);
    assert.equal(v.links.formulary, 'https://www.acme.example/formulary');
    assert.equal(v.deductible.individual_tier1, 1500);
    assert.equal(v.deductible.family_tier1, 3000);
    assert.equal(v.deductible.family_per_person_tier1, 1500);
    assert.equal(v.max_out_of_pocket.individual_tier1, 9200);
    assert.equal(v.max_out_of_pocket.family_tier1, 18400);
    assert.equal(v.coinsurance_tier1, 0.2);
    assert.equal(v.sbc_scenarios.having_baby.total, 4870);
    assert.equal(v.primary_care.deductible_coinsurance_after_copays, 3);
    assert.equal(v.import_date, '2024-11-20');
    assert.equal(result.newestImport, '2024-11-20');
    const rejected = sink.kept.filter((d) => d.severity === 'error');
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0]!.line, 101);
    assert.equal(rejected[0]!.columnName, 'MetalLevel');
    assert.equal(rejected[0]!.column, col('MetalLevel'));
  });

  it('reads the single CSV member of a zip', async () => {
    const data = rows(4);
    const csv = Buffer.from(toCsv(OFFICIAL_HEADER, data));
    const fromCsv = await load(writeFile(csv), 2025, 'plan-attributes-puf');
    const zipped = writeFile(makeZip([{ name: 'Plan_Attributes_PUF.csv', data: csv, method: 8 }]), 'zip');
    const fromZip = await load(zipped, 2025, 'plan-attributes-puf');
    assert.equal(fromZip.result.variants.size, 4);
    assert.deepEqual(fromZip.result.variants, fromCsv.result.variants);
    assert.equal(fromZip.sink.files.get('plan-attributes-puf')?.rowsRead, 4);
    // The default display name is the archive's base name.
    const named = await load(zipped);
    assert.equal(named.file, path.basename(zipped));
  });

  it('keeps a quoted PlanMarketingName with a comma and line breaks, and counts physical lines after it', async () => {
    const data = [
      planRow(1, { PlanMarketingName: 'Acme Silver, "Plus"\nEdition' }), // lines 2-3
      planRow(2, { PlanMarketingName: 'Two\r\nline\r\nname' }), // lines 4-6
      ...rows(97, 3), // lines 7-103
      planRow(300, { PlanId: 'bad-id' }), // line 104
    ];
    const { sink, result } = await load(writeFile(toCsv(OFFICIAL_HEADER, data)), 2025, 'quoted.csv');
    assert.equal(result.variants.get('12345TX0000001-01')?.name, 'Acme Silver, "Plus"\nEdition');
    assert.equal(result.variants.get('12345TX0000002-01')?.name, 'Two\r\nline\r\nname');
    assert.equal(result.variants.get('12345TX0000003-01')?.name, 'Acme Silver 3');
    assert.equal(result.variants.size, 99);
    const d = sink.kept.find((k) => k.severity === 'error');
    assert.ok(d);
    assert.equal(d.line, 104);
    assert.equal(d.columnName, 'PlanId');
    assert.equal(d.value, 'bad-id');
  });
});

describe('loadPlanAttributes: diagnostics', () => {
  /** 99 good rows then `bad` (line 101): one rejected row out of 100 stays within the 1 % limit. */
  async function withOneBadRow(bad: Row, extraBefore: Row[] = []) {
    const data = [...extraBefore, ...rows(99 - extraBefore.length), bad];
    const out = await load(writeFile(toCsv(OFFICIAL_HEADER, data)), 2025, 'plans.csv');
    const errors = out.sink.kept.filter((d) => d.severity === 'error');
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.equal(out.sink.files.get('plans.csv')?.rowsRejected, 1);
    assert.equal(out.sink.files.get('plans.csv')?.rowsRead, 100);
    return { ...out, d: errors[0]! };
  }

  it('rejects a bad PlanId with file, line, column, column name, value and reason', async () => {
    const { d, result } = await withOneBadRow(planRow(500, { PlanId: '12345TX000050-1' }));
    assert.equal(d.code, DIAGNOSTIC_CODES.rowRejected);
    assert.equal(d.severity, 'error');
    assert.equal(d.file, 'plans.csv');
    assert.equal(d.line, 101);
    assert.equal(d.column, col('PlanId'));
    assert.equal(d.column, 43);
    assert.equal(d.columnName, 'PlanId');
    assert.equal(d.value, '12345TX000050-1');
    assert.match(d.reason, /plan variant id/);
    assert.equal(result.variants.size, 99);
  });

  it('rejects a StandardComponentId that does not match the PlanId', async () => {
    const { d, result } = await withOneBadRow(planRow(500, { StandardComponentId: '12345TX0000501' }));
    assert.equal(d.columnName, 'StandardComponentId');
    assert.equal(d.column, col('StandardComponentId'));
    assert.equal(d.value, '12345TX0000501');
    assert.equal(d.line, 101);
    assert.match(d.reason, /12345TX0000500-01/);
    assert.equal(result.variants.has('12345TX0000500-01'), false);
  });

  it('rejects a row of another BusinessYear', async () => {
    const { d, result } = await withOneBadRow(planRow(500, { BusinessYear: '2024' }));
    assert.equal(d.columnName, 'BusinessYear');
    assert.equal(d.column, 1);
    assert.equal(d.value, '2024');
    assert.match(d.reason, /2025/);
    assert.equal(result.variants.has('12345TX0000500-01'), false);
  });

  it('rejects an unknown MetalLevel', async () => {
    const { d } = await withOneBadRow(planRow(500, { MetalLevel: 'Diamond' }));
    assert.equal(d.columnName, 'MetalLevel');
    assert.equal(d.column, col('MetalLevel'));
    assert.equal(d.value, 'Diamond');
    assert.match(d.reason, /metal level/);
  });

  it('accepts every medical metal level in any case', async () => {
    const metals = ['Bronze', 'Expanded Bronze', 'SILVER', 'gold', 'Platinum', 'Catastrophic'];
    const data = metals.map((m, i) => planRow(i + 1, { MetalLevel: m }));
    const { result, sink } = await load(writeFile(toCsv(OFFICIAL_HEADER, data)));
    assert.deepEqual(
      [...result.variants.values()].map((v) => v.metal_level),
      ['bronze', 'expanded bronze', 'silver', 'gold', 'platinum', 'catastrophic'],
    );
    assert.equal(sink.errorCount, 0);
  });

  it('rejects an unknown PlanType', async () => {
    const { d } = await withOneBadRow(planRow(500, { PlanType: 'PFFS' }));
    assert.equal(d.columnName, 'PlanType');
    assert.equal(d.column, col('PlanType'));
    assert.equal(d.value, 'PFFS');
    assert.match(d.reason, /plan type/);
  });

  it('rejects a duplicate PlanId and keeps the first row', async () => {
    const { d, result } = await withOneBadRow(planRow(1, { PlanMarketingName: 'Second copy' }));
    assert.equal(d.columnName, 'PlanId');
    assert.equal(d.value, '12345TX0000001-01');
    assert.equal(d.line, 101);
    assert.match(d.reason, /duplicate/);
    assert.equal(result.variants.get('12345TX0000001-01')?.name, 'Acme Silver 1');
  });

  it('nulls an unparsable money value with a warning and keeps the row', async () => {
    const data = [planRow(1, { TEHBDedInnTier1Individual: '$1,2x' }), planRow(2)];
    const { sink, result } = await load(writeFile(toCsv(OFFICIAL_HEADER, data)), 2025, 'money.csv');
    const v = result.variants.get('12345TX0000001-01');
    assert.ok(v);
    assert.equal(v.deductible.individual_tier1, null);
    assert.equal(v.deductible.family_tier1, 3000);
    assert.equal(sink.errorCount, 0);
    assert.equal(sink.warningCount, 1);
    const w = sink.kept[0]!;
    assert.equal(w.severity, 'warning');
    assert.equal(w.code, DIAGNOSTIC_CODES.nullValue);
    assert.equal(w.file, 'money.csv');
    assert.equal(w.line, 2);
    assert.equal(w.column, col('TEHBDedInnTier1Individual'));
    assert.equal(w.columnName, 'TEHBDedInnTier1Individual');
    assert.equal(w.value, '$1,2x');
    assert.match(w.reason, /null/);
  });

  it('reads "Not Applicable" and its family spellings as null without a warning', async () => {
    const data = [
      planRow(1, {
        TEHBDedInnTier1Individual: 'Not Applicable',
        TEHBDedInnTier1FamilyPerGroup: 'per group not applicable',
        TEHBDedInnTier1FamilyPerPerson: 'per person not applicable',
        TEHBInnTier1IndividualMOOP: 'not applicable',
      }),
    ];
    const { sink, result } = await load(writeFile(toCsv(OFFICIAL_HEADER, data)));
    const v = result.variants.get('12345TX0000001-01')!;
    assert.equal(v.deductible.individual_tier1, null);
    assert.equal(v.deductible.family_tier1, null);
    assert.equal(v.deductible.family_per_person_tier1, null);
    assert.equal(v.max_out_of_pocket.individual_tier1, null);
    assert.equal(v.deductible.individual_tier2, null);
    assert.equal(sink.warningCount, 0);
    assert.equal(sink.kept.length, 0);
  });

  it('fails on missing required columns, naming the file, line 1 and every missing column', async () => {
    const missing = ['PlanId', 'MetalLevel', 'CSRVariationType'];
    const header = OFFICIAL_HEADER.filter((h) => !missing.includes(h));
    const file = writeFile(toCsv(header, rows(3)));
    await assert.rejects(load(file, 2025, 'plans.csv'), (err: unknown) => {
      assert.ok(err instanceof FatalBuildError);
      assert.equal(err.code, DIAGNOSTIC_CODES.missingColumn);
      assert.match(err.message, /^plans\.csv:1:/);
      for (const m of missing) assert.ok(err.message.includes(m), `${m} in ${err.message}`);
      assert.equal(err.diagnostic?.line, 1);
      assert.equal(err.diagnostic?.file, 'plans.csv');
      return true;
    });
  });

  it('warns once for a missing optional column and reads its values as null', async () => {
    const header = OFFICIAL_HEADER.filter((h) => h !== 'NetworkId');
    const { sink, result } = await load(writeFile(toCsv(header, rows(5))), 2025, 'plans.csv');
    assert.equal(result.variants.size, 5);
    for (const v of result.variants.values()) assert.equal(v.network_id, null);
    assert.equal(sink.warningCount, 1);
    assert.equal(sink.errorCount, 0);
    const w = sink.kept[0]!;
    assert.equal(w.severity, 'warning');
    assert.equal(w.columnName, 'NetworkId');
    assert.equal(w.line, 1);
    assert.equal(w.file, 'plans.csv');
  });

  it('fails when more than 1 % of the rows are rejected', async () => {
    const data = [...rows(98), planRow(501, { PlanType: 'PFFS' }), planRow(502, { MetalLevel: 'Diamond' })];
    await assert.rejects(load(writeFile(toCsv(OFFICIAL_HEADER, data)), 2025, 'plans.csv'), (err: unknown) => {
      assert.ok(err instanceof FatalBuildError);
      assert.equal(err.code, DIAGNOSTIC_CODES.tooManyRejected);
      assert.equal(err.code, 'HPD_BUILD_TOO_MANY_REJECTED');
      assert.match(err.message, /plans\.csv: 2 of 100 rows rejected/);
      assert.match(err.message, /first: plans\.csv:100:16: /);
      return true;
    });
  });

  it('counts SHOP rows as ignored, not rejected, and keeps individual dental rows apart from the medical ones', async () => {
    const data = [
      planRow(1),
      planRow(2, { MarketCoverage: 'SHOP (Small Group)' }),
      planRow(3, { DentalOnlyPlan: 'Yes', MetalLevel: 'High' }),
      planRow(4, { DentalOnlyPlan: 'Yes', MetalLevel: 'Low', MarketCoverage: 'SHOP (Small Group)' }),
    ];
    const { sink, result } = await load(writeFile(toCsv(OFFICIAL_HEADER, data)), 2025, 'plans.csv');
    assert.deepEqual([...result.variants.keys()], ['12345TX0000001-01']);
    assert.deepEqual([...result.dental.keys()], ['12345TX0000003-01']);
    assert.deepEqual(sink.files.get('plans.csv'), { rowsRead: 4, rowsRejected: 0, rowsIgnored: 2 });
  });
});

describe('loadPlanAttributes: stand-alone dental rows', () => {
  const dentalRow = (n: number, over: Row = {}): Row =>
    planRow(n, {
      DentalOnlyPlan: 'Yes',
      MetalLevel: 'Low',
      PlanType: 'PPO',
      ChildOnlyOffering: 'Allows Child-Only',
      CSRVariationType: 'Standard Low Off Exchange Plan',
      PlanId: `12345TX${String(n).padStart(7, '0')}-00`,
      EHBPediatricDentalApportionmentQuantity: '0.993',
      MEHBDedInnTier1Individual: 'Not Applicable',
      MEHBInnTier1IndividualMOOP: '$425',
      PlanBrochure: 'www.acme.example/dental.pdf',
      ...over,
    });

  it('reads the dental fields: level, enrollees, exchange, EHB share, MEHB deductible and MOOP, documents', async () => {
    const { sink, result } = await load(writeFile(toCsv(OFFICIAL_HEADER, [dentalRow(7)])), 2025, 'plans.csv');
    assert.equal(result.variants.size, 0);
    assert.deepEqual(result.dental.get('12345TX0000007-00'), {
      id: '12345TX0000007-00',
      standard_component_id: '12345TX0000007',
      name: 'Acme Silver 7',
      issuer_id: '12345',
      issuer: 'Acme Health',
      state: 'TX',
      plan_type: 'ppo',
      metal_level: 'low',
      enrollees: 'child_only',
      on_exchange: false,
      csr_variation: 'Standard Low Off Exchange Plan',
      service_area_id: 'TXS001',
      ehb_pediatric_dental_apportionment: 0.993,
      deductible_individual: null,
      max_out_of_pocket_individual: 425,
      links: { benefits_summary: 'https://acme.example/sbc/12345TX0000007-01.pdf', brochure: 'https://www.acme.example/dental.pdf' },
    });
    assert.equal(sink.errorCount, 0);
  });

  it('rejects a malformed dental row with its file, line, column and reason; a bad optional value is nulled with a warning', async () => {
    const data = [...rows(150), dentalRow(200, { MetalLevel: 'Silver' }), dentalRow(201, { MEHBInnTier1IndividualMOOP: 'lots' })];
    const { sink, result } = await load(writeFile(toCsv(OFFICIAL_HEADER, data)), 2025, 'plans.csv');
    assert.deepEqual([...result.dental.keys()], ['12345TX0000201-00']);
    assert.equal(result.dental.get('12345TX0000201-00')!.max_out_of_pocket_individual, null);
    const [error] = sink.kept.filter((d) => d.severity === 'error');
    assert.deepEqual(
      { file: error!.file, line: error!.line, column: error!.column, columnName: error!.columnName, value: error!.value },
      { file: 'plans.csv', line: 152, column: col('MetalLevel'), columnName: 'MetalLevel', value: 'Silver' },
    );
    assert.match(error!.reason, /not a dental metal level \(high, low\)/);
    const [warning] = sink.kept.filter((d) => d.severity === 'warning');
    assert.deepEqual([warning!.line, warning!.column, warning!.value], [153, col('MEHBInnTier1IndividualMOOP'), 'lots']);
    assert.match(formatDiagnostic(error!), /^plans\.csv:152:\d+: not a dental metal level/);
  });
});

/** Every number reachable from `value`, with its path. */
function* numbersIn(value: unknown, at = '$'): Generator<[string, number]> {
  if (typeof value === 'number') yield [at, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* numbersIn(v, `${at}[${i}]`);
  else if (value instanceof Map) for (const [k, v] of value) yield* numbersIn(v, `${at}.${String(k)}`);
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) yield* numbersIn(v, `${at}.${k}`);
}

describe('loadPlanAttributes: the real PY2025 file', () => {
  it('loads 22,663 individual medical variants, 4,541 plans, 31 states, no NaN, 0 rejected', async () => {
    const { sink, result, file } = await load(REAL_FILE, 2025);
    const variants = [...result.variants.values()];
    assert.equal(variants.length, 22663);
    assert.equal(new Set(variants.map((v) => v.standard_component_id)).size, 4541);
    assert.equal(new Set(variants.map((v) => v.state)).size, 31);
    assert.equal(new Set(variants.map((v) => v.issuer_id)).size, 206);
    const counts = sink.files.get(file)!;
    assert.equal(counts.rowsRead, 24527);
    assert.equal(counts.rowsRejected, 0);
    // Left out: the 558 SHOP rows; the 1,306 individual dental variants are kept apart.
    assert.equal(counts.rowsIgnored, 558);
    assert.equal(result.dental.size, 1306);
    assert.equal(new Set([...result.dental.values()].map((d) => d.standard_component_id)).size, 819);
    assert.equal(new Set([...result.dental.values()].map((d) => d.state)).size, 31);
    assert.equal(sink.errorCount, 0);
    let numbers = 0;
    const bad: string[] = [];
    for (const v of variants) {
      for (const [where, n] of numbersIn(v)) {
        numbers++;
        if (!Number.isFinite(n)) bad.push(`${v.id} ${where} = ${n}`);
      }
    }
    assert.deepEqual(bad.slice(0, 10), []);
    assert.ok(numbers > 22663 * 20, `only ${numbers} numbers`);
    // Spot checks against shared/data/README.md §4.1.
    const metal = new Map<string, number>();
    for (const v of variants) metal.set(v.metal_level, (metal.get(v.metal_level) ?? 0) + 1);
    assert.equal(metal.get('silver'), 11196);
    assert.equal(metal.get('expanded bronze'), 5145);
    assert.equal(variants.filter((v) => v.hsa_eligible).length, 406);
    assert.equal(variants.filter((v) => v.max_out_of_pocket.individual_tier1 === 9200).length > 1000, true);
    assert.ok(result.newestImport !== null && result.newestImport <= '2024-12-05' && result.newestImport >= '2024-12-01');
  });
});
