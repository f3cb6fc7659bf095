/**
 * @module A small national dataset in the official file formats, written by the tests themselves.
 *
 * Two states with plans (TX, rated by county, and AK, rated by ZIP3), one state without plan data (HI),
 * a territory the build must leave out (PR), a ZIP spanning two counties and rating areas, a ZIP spanning
 * two counties of one rating area, a partial
 * county service area, a whole-state service area, a child-only silver plan and an off-exchange-only
 * plan. Headers are deliberately in a different order from the official files, with a BOM and CRLF on
 * the Plan Attributes file, because loaders must key on header names.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface FixturePlan {
  readonly scid: string;
  readonly state: string;
  readonly issuerId: string;
  readonly issuer: string;
  readonly metal: string;
  readonly type: string;
  readonly serviceArea: string;
  readonly childOnly?: boolean;
  readonly offExchangeOnly?: boolean;
  readonly deductible: string;
  readonly moop: string;
  readonly name: string;
  /** EHBPercentTotalPremium; '1.0' when not given. */
  readonly ehbPercent?: string;
}

export const FIXTURE_PLANS: readonly FixturePlan[] = [
  {
    scid: '11111TX0010001',
    state: 'TX',
    issuerId: '11111',
    issuer: 'Lone Star Health ',
    metal: 'Silver',
    type: 'HMO',
    serviceArea: 'TXS001',
    deductible: '$4,500',
    moop: '$9,200',
    name: 'Lone Star Silver 4500',
  },
  {
    scid: '11111TX0010002',
    state: 'TX',
    issuerId: '11111',
    issuer: 'Lone Star Health ',
    metal: 'Silver',
    type: 'EPO',
    serviceArea: 'TXS001',
    deductible: '$3,000',
    moop: '$9,000',
    name: 'Lone Star Silver 3000',
  },
  {
    scid: '11111TX0010003',
    state: 'TX',
    issuerId: '11111',
    issuer: 'Lone Star Health ',
    metal: 'Bronze',
    type: 'HMO',
    serviceArea: 'TXS001',
    deductible: '$7,500',
    moop: '$9,200',
    name: 'Lone Star Bronze 7500',
    // A plan whose premium is not all for essential health benefits: the credit cannot pay the rest.
    ehbPercent: '0.9',
  },
  {
    scid: '11111TX0010004',
    state: 'TX',
    issuerId: '11111',
    issuer: 'Lone Star Health ',
    metal: 'Gold',
    type: 'PPO',
    serviceArea: 'TXS001',
    deductible: '$1,000',
    moop: '$7,000',
    name: 'Lone Star Gold 1000',
  },
  {
    scid: '11111TX0010005',
    state: 'TX',
    issuerId: '11111',
    issuer: 'Lone Star Health ',
    metal: 'Catastrophic',
    type: 'HMO',
    serviceArea: 'TXS001',
    deductible: '$9,200',
    moop: '$9,200',
    name: 'Lone Star Catastrophic',
  },
  {
    scid: '22222TX0020001',
    state: 'TX',
    issuerId: '22222',
    issuer: 'Gulf Coast Care',
    metal: 'Silver',
    type: 'PPO',
    serviceArea: 'TXS002',
    deductible: '$5,000',
    moop: '$9,200',
    name: 'Gulf Silver 5000',
  },
  {
    scid: '22222TX0020002',
    state: 'TX',
    issuerId: '22222',
    issuer: 'Gulf Coast Care',
    metal: 'Expanded Bronze',
    type: 'PPO',
    serviceArea: 'TXS002',
    deductible: '$6,000',
    moop: '$9,200',
    name: 'Gulf Expanded Bronze',
  },
  {
    scid: '22222TX0020003',
    state: 'TX',
    issuerId: '22222',
    issuer: 'Gulf Coast Care',
    metal: 'Silver',
    type: 'PPO',
    serviceArea: 'TXS002',
    deductible: '$2,000',
    moop: '$8,000',
    name: 'Gulf Kids Silver',
    childOnly: true,
  },
  {
    scid: '33333TX0030001',
    state: 'TX',
    issuerId: '33333',
    issuer: 'Downtown Health',
    metal: 'Silver',
    type: 'HMO',
    serviceArea: 'TXS003',
    deductible: '$2,500',
    moop: '$9,100',
    name: 'Downtown Silver',
  },
  {
    scid: '33333TX0030002',
    state: 'TX',
    issuerId: '33333',
    issuer: 'Downtown Health',
    metal: 'Platinum',
    type: 'HMO',
    serviceArea: 'TXS003',
    deductible: '$0',
    moop: '$3,000',
    name: 'Downtown Platinum',
    offExchangeOnly: true,
  },
  {
    scid: '44444AK0040001',
    state: 'AK',
    issuerId: '44444',
    issuer: 'Northern Lights Health',
    metal: 'Silver',
    type: 'PPO',
    serviceArea: 'AKS001',
    deductible: '$4,000',
    moop: '$9,200',
    name: 'Northern Silver',
  },
  {
    scid: '44444AK0040002',
    state: 'AK',
    issuerId: '44444',
    issuer: 'Northern Lights Health',
    metal: 'Silver',
    type: 'PPO',
    serviceArea: 'AKS001',
    deductible: '$3,500',
    moop: '$9,000',
    name: 'Northern Silver Plus',
  },
  {
    scid: '44444AK0040003',
    state: 'AK',
    issuerId: '44444',
    issuer: 'Northern Lights Health',
    metal: 'Bronze',
    type: 'PPO',
    serviceArea: 'AKS001',
    deductible: '$7,000',
    moop: '$9,200',
    name: 'Northern Bronze',
  },
];

/** Plan Attributes columns written, in a scrambled order. */
const PA_COLUMNS = [
  'PlanId',
  'MetalLevel',
  'BusinessYear',
  'StateCode',
  'IssuerId',
  'IssuerMarketPlaceMarketingName',
  'SourceName',
  'ImportDate',
  'MarketCoverage',
  'DentalOnlyPlan',
  'StandardComponentId',
  'PlanMarketingName',
  'HIOSProductId',
  'NetworkId',
  'ServiceAreaId',
  'FormularyId',
  'PlanType',
  'QHPNonQHPTypeId',
  'ChildOnlyOffering',
  'CSRVariationType',
  'IsHSAEligible',
  'NationalNetwork',
  'EHBPercentTotalPremium',
  'MedicalDrugDeductiblesIntegrated',
  'MedicalDrugMaximumOutofPocketIntegrated',
  'TEHBDedInnTier1Individual',
  'TEHBDedInnTier1FamilyPerGroup',
  'TEHBDedInnTier1Coinsurance',
  'TEHBInnTier1IndividualMOOP',
  'TEHBInnTier1FamilyPerGroupMOOP',
  'TEHBDedOutOfNetIndividual',
  'SBCHavingaBabyDeductible',
  'SBCHavingaBabyCopayment',
  'SBCHavingaBabyCoinsurance',
  'SBCHavingaBabyLimit',
  'SBCHavingDiabetesDeductible',
  'SBCHavingDiabetesCopayment',
  'SBCHavingDiabetesCoinsurance',
  'SBCHavingDiabetesLimit',
  'URLForSummaryofBenefitsCoverage',
  'PlanBrochure',
  'FormularyURL',
  'PlanVariantMarketingName',
];

export function csvLine(values: readonly string[]): string {
  return values.map((v) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v)).join(',');
}

function variantsOf(p: FixturePlan): Array<[string, string]> {
  const metal = p.metal;
  const out: Array<[string, string]> = [];
  if (!p.offExchangeOnly) out.push(['01', `Standard ${metal} On Exchange Plan`]);
  out.push(['00', `Standard ${metal} Off Exchange Plan`]);
  if (metal === 'Silver' && !p.offExchangeOnly) {
    out.push(['04', '73% AV Level Silver Plan'], ['05', '87% AV Level Silver Plan'], ['06', '94% AV Level Silver Plan']);
  }
  return out;
}

export function planAttributesCsv(year: number, plans: readonly FixturePlan[] = FIXTURE_PLANS, extraRows: readonly string[] = []): string {
  const lines = [csvLine(PA_COLUMNS)];
  for (const p of plans) {
    for (const [variant, csr] of variantsOf(p)) {
      const csrDed = variant === '06' ? '$500' : variant === '05' ? '$1,000' : variant === '04' ? '$3,500' : p.deductible;
      const values: Record<string, string> = {
        PlanId: `${p.scid}-${variant}`,
        MetalLevel: p.metal,
        BusinessYear: String(year),
        StateCode: p.state,
        IssuerId: p.issuerId,
        IssuerMarketPlaceMarketingName: p.issuer,
        SourceName: 'HIOS',
        ImportDate: '2024-11-20 01:02:03',
        MarketCoverage: 'Individual',
        DentalOnlyPlan: 'No',
        StandardComponentId: p.scid,
        PlanMarketingName: p.name,
        HIOSProductId: p.scid.slice(0, 10),
        NetworkId: `${p.state}N001`,
        ServiceAreaId: p.serviceArea,
        FormularyId: `${p.state}F001`,
        PlanType: p.type,
        QHPNonQHPTypeId: 'Both',
        ChildOnlyOffering: p.childOnly === true ? 'Allows Child-Only' : 'Allows Adult and Child-Only',
        CSRVariationType: csr,
        IsHSAEligible: p.metal === 'Bronze' ? 'Yes' : 'No',
        NationalNetwork: 'No',
        EHBPercentTotalPremium: p.ehbPercent ?? '1.0',
        MedicalDrugDeductiblesIntegrated: 'Yes',
        MedicalDrugMaximumOutofPocketIntegrated: 'Yes',
        TEHBDedInnTier1Individual: csrDed,
        TEHBDedInnTier1FamilyPerGroup: '$9000 per group',
        TEHBDedInnTier1Coinsurance: '20.00%',
        TEHBInnTier1IndividualMOOP: p.moop,
        TEHBInnTier1FamilyPerGroupMOOP: '$18400 per group',
        TEHBDedOutOfNetIndividual: 'Not Applicable',
        SBCHavingaBabyDeductible: '$1,500',
        SBCHavingaBabyCopayment: '$10',
        SBCHavingaBabyCoinsurance: '$3,300',
        SBCHavingaBabyLimit: '$60',
        SBCHavingDiabetesDeductible: '$1,500',
        SBCHavingDiabetesCopayment: '$400',
        SBCHavingDiabetesCoinsurance: '$200',
        SBCHavingDiabetesLimit: '$20',
        URLForSummaryofBenefitsCoverage: `https://issuer.example/sbc/${p.scid}-${variant}.pdf`,
        PlanBrochure: 'N/A',
        FormularyURL: 'www.issuer.example/formulary',
        PlanVariantMarketingName: `${p.name} ${variant}`,
      };
      lines.push(csvLine(PA_COLUMNS.map((c) => values[c] ?? '')));
    }
  }
  // A dental and a SHOP row, which the build must leave out.
  const dental: Record<string, string> = {
    PlanId: '55555TX0050001-01',
    MetalLevel: 'High',
    BusinessYear: String(year),
    StateCode: 'TX',
    IssuerId: '55555',
    MarketCoverage: 'Individual',
    DentalOnlyPlan: 'Yes',
    StandardComponentId: '55555TX0050001',
    PlanType: 'PPO',
    CSRVariationType: 'Standard High On Exchange Plan',
    IssuerMarketPlaceMarketingName: 'Tooth Co',
    PlanMarketingName: 'Dental',
    ServiceAreaId: 'TXS001',
  };
  lines.push(csvLine(PA_COLUMNS.map((c) => dental[c] ?? '')));
  lines.push(...extraRows);
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}

export function serviceAreaCsv(year: number): string {
  const header = [
    'BusinessYear',
    'StateCode',
    'IssuerId',
    'SourceName',
    'ImportDate',
    'ServiceAreaId',
    'ServiceAreaName',
    'CoverEntireState',
    'County',
    'PartialCounty',
    'ZipCodes',
    'PartialCountyJustification',
    'MarketCoverage',
    'DentalOnlyPlan',
  ];
  const row = (
    state: string,
    issuer: string,
    sa: string,
    entire: string,
    county: string,
    partial: string,
    zips: string,
    market = 'Individual',
    dental = 'No',
  ): string =>
    csvLine([
      String(year),
      state,
      issuer,
      'HIOS',
      '2024-08-29 01:02:15',
      sa,
      `${sa} name, with comma`,
      entire,
      county,
      partial,
      zips,
      partial === 'Yes' ? 'doc.pdf' : '',
      market,
      dental,
    ]);
  return `${[
    header.join(','),
    row('TX', '11111', 'TXS001', 'No', '48201', 'No', ''),
    row('TX', '11111', 'TXS001', 'No', '48157', 'No', ''),
    row('TX', '22222', 'TXS002', 'Yes', '', '', ''),
    row('TX', '33333', 'TXS003', 'No', '48201', 'Yes', '77002, 77003'),
    row('AK', '44444', 'AKS001', 'Yes', '', '', ''),
    row('TX', '55555', 'TXS001', 'Yes', '', '', '', 'Individual', 'Yes'),
    row('TX', '11111', 'TXS009', 'No', '48201', 'No', '', 'SHOP (Small Group)', 'No'),
  ].join('\r\n')}\r\n`;
}

export const FIXTURE_ZIPS = {
  /** Harris County only. */
  harris: '77002',
  /** Harris County, second ZIP of the partial-county service area. */
  harris2: '77003',
  /** Fort Bend (70 % of residences, rating area 26) and Harris (30 %, area 10). */
  split: '77477',
  /** Harris (60 % of residences) and Liberty (40 %), both rating area 10. */
  splitOneArea: '77336',
  /** Montgomery County, area 27: only the whole-state issuer. */
  montgomery: '77301',
  anchorage: '99501',
  fairbanks: '99701',
  /** Hawaii: geography and benchmarks but no plan data. */
  honolulu: '96813',
  /** Puerto Rico: no ACA rating areas; not in the build. */
  puertoRico: '00601',
} as const;

export function hudCsv(): string {
  const rows = [
    ['77002', '48201', 'HOUSTON', 'TX', '1.000000000', '1.000000000', '1.000000000', '1.000000000'],
    ['77003', '48201', 'HOUSTON', 'TX', '1.000000000', '1.000000000', '1.000000000', '1.000000000'],
    ['77477', '48201', 'STAFFORD', 'TX', '0.300000000', '0.500000000', '0.000000000', '0.320000000'],
    ['77477', '48157', 'STAFFORD', 'TX', '0.700000000', '0.500000000', '1.000000000', '0.680000000'],
    ['77336', '48201', 'HUFFMAN', 'TX', '0.600000000', '0.600000000', '0.600000000', '0.600000000'],
    ['77336', '48291', 'HUFFMAN', 'TX', '0.400000000', '0.400000000', '0.400000000', '0.400000000'],
    ['77301', '48339', 'CONROE', 'TX', '1.000000000', '1.000000000', '1.000000000', '1.000000000'],
    ['99501', '02020', 'ANCHORAGE', 'AK', '1.000000000', '1.000000000', '1.000000000', '1.000000000'],
    ['99701', '02090', 'FAIRBANKS', 'AK', '1.000000000', '1.000000000', '1.000000000', '1.000000000'],
    ['96813', '15003', 'HONOLULU', 'HI', '1.000000000', '1.000000000', '1.000000000', '1.000000000'],
    ['00601', '72001', 'ADJUNTAS', 'PR', '1.000000000', '1.000000000', '1.000000000', '1.000000000'],
  ];
  // BOM, CRLF and no newline after the last row, like the real HUD file.
  return `\uFEFFZIP,COUNTY,USPS_ZIP_PREF_CITY,USPS_ZIP_PREF_STATE,RES_RATIO,BUS_RATIO,OTH_RATIO,TOT_RATIO\r\n${rows.map((r) => r.join(',')).join('\r\n')}`;
}

export function countyNamesCsv(): string {
  return `${[
    'state_code,state_name,state_fips,county_fips,full_fips,county_name,county_display_name',
    'TX,Texas,48,201,48201,Harris County,Harris',
    'TX,Texas,48,157,48157,Fort Bend County,Fort Bend',
    'TX,Texas,48,339,48339,Montgomery County,Montgomery',
    'TX,Texas,48,291,48291,Liberty County,Liberty',
    'AK,Alaska,02,020,02020,Anchorage Municipality,Anchorage',
    'AK,Alaska,02,090,02090,Fairbanks North Star Borough,Fairbanks North Star',
    'HI,Hawaii,15,003,15003,Honolulu County,Honolulu',
    'PR,Puerto Rico,72,001,72001,Adjuntas Municipio,Adjuntas',
  ].join('\r\n')}\r\n`;
}

export const FIXTURE_BENCHMARKS_2025 = {
  'TX:10': 308,
  'TX:26': 290,
  'TX:27': 300,
  'AK:1': 606,
  'AK:2': 580,
  'AK:3': 640,
  'HI:1': 350,
} as const;

export function slcspYaml(benchmarks: Readonly<Record<string, number>> = FIXTURE_BENCHMARKS_2025): string {
  const by = new Map<string, Array<[number, number]>>();
  for (const [key, v] of Object.entries(benchmarks)) {
    const [st, a] = key.split(':') as [string, string];
    const list = by.get(st) ?? [];
    list.push([Number(a), v]);
    by.set(st, list);
  }
  let out = 'description: test benchmarks\nmetadata:\n  unit: currency-USD\n';
  for (const [st, list] of by) {
    out += `${st}:\n`;
    for (const [a, v] of list)
      out += `  ${a}:\n    2024-01-01: ${(v * 0.9).toFixed(2)}\n    2025-01-01: ${v.toFixed(2)}\n    2026-01-01: ${(v * 1.3).toFixed(2)}\n`;
  }
  return out;
}

export interface FixtureFiles {
  readonly dir: string;
  readonly sourcesFile: string;
  readonly paths: Record<string, string>;
}

export function countyRatingAreasCsv(): string {
  return 'county,rating_area\r\nHARRIS_COUNTY_TX,10\r\nFORT_BEND_COUNTY_TX,26\r\nMONTGOMERY_COUNTY_TX,27\r\nLIBERTY_COUNTY_TX,10\r\nANCHORAGE_MUNICIPALITY_AK,1\r\nFAIRBANKS_NORTH_STAR_BOROUGH_AK,2\r\nHONOLULU_COUNTY_HI,1\r\n';
}

/** Replacements for single inputs, so a test can make a second, modified build of the same year. */
export interface FixtureInputOptions {
  readonly planAttributes?: string;
  readonly rates?: string;
  readonly benchmarks?: Readonly<Record<string, number>>;
  readonly hud?: string;
  /** HUD's Q4 2020 Connecticut rows (legacy counties); default: the header alone. */
  readonly hudCt2020?: string;
  readonly countyRatingAreas?: string;
}

/** Writes every input and a sources file (absolute mirror paths) into `dir`. */
export function writeFixtureInputs(dir: string, year = 2025, opts: FixtureInputOptions = {}): FixtureFiles {
  mkdirSync(dir, { recursive: true });
  const files: Record<string, [string, string]> = {
    plan_attributes: ['plan-attributes-puf.csv', opts.planAttributes ?? planAttributesCsv(year)],
    service_area: ['service-area-puf.csv', serviceAreaCsv(year)],
    hud_zip_county: ['ZIP_COUNTY_122024.csv', opts.hud ?? hudCsv()],
    county_names: ['county_fips_2020.csv', countyNamesCsv()],
    hud_zip_county_ct_2020: ['ZIP_COUNTY_122020_CT.csv', opts.hudCt2020 ?? 'ZIP,COUNTY,RES_RATIO,BUS_RATIO,OTH_RATIO,TOT_RATIO\r\n'],
    ct_planning_regions: ['ct_planning_regions_2022.csv', 'state_code,county_fips,county_name\nCT,09110,Capitol Planning Region\n'],
    county_rating_areas: ['county_rating_areas.csv', opts.countyRatingAreas ?? countyRatingAreasCsv()],
    county_rating_areas_2014: [
      'county_rating_areas_2014.csv',
      'statefip,state,countyfip,county,ratingarea\n48,Texas,48201,Harris,1\n2,Alaska,2020,Anchorage,\n',
    ],
    zip3_rating_areas: [
      'zip3_rating_areas_2014.csv',
      'statefip,state,ratingarea,zip3\n2,Alaska,1,995\n2,Alaska,2,996\n2,Alaska,2,997\n2,Alaska,3,998\n2,Alaska,3,999\n',
    ],
    la_county_zip3: ['la_county_zip3_rating_areas.yaml', 'description: LA\n900:\n  2014-01-01: 16\n906:\n  2014-01-01: 15\n'],
    slcsp_benchmarks: ['slcsp_by_rating_area.yaml', slcspYaml(opts.benchmarks)],
  };
  if (opts.rates !== undefined) files.rates = ['rate-puf.csv', opts.rates];
  const paths: Record<string, string> = {};
  const inputs: Record<string, unknown> = {};
  for (const [name, [file, content]] of Object.entries(files)) {
    const p = join(dir, file);
    writeFileSync(p, content);
    paths[name] = p;
    inputs[name] = { title: name, required: name !== 'rates', url: `http://127.0.0.1:9/${file}`, url_sha256: null, mirrors: [{ path: p }] };
  }
  if (opts.rates === undefined)
    inputs.rates = {
      title: 'rates',
      required: false,
      url: 'http://127.0.0.1:9/rate-puf.zip',
      url_sha256: null,
      mirrors: [{ path: join(dir, 'absent-rate-puf.csv') }],
    };
  const sourcesFile = join(dir, `sources-${year}.json`);
  writeFileSync(sourcesFile, JSON.stringify({ year, inputs }, null, 2));
  return { dir, sourcesFile, paths };
}
