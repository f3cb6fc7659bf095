/**
 * @module The column dialect of the CMS state-based-exchange (SBE) PUFs: Plans, Rates, Service Areas
 * (shared/data/README.md §4.7), declared column by column against the federal names the loaders use.
 *
 * The SBE headers are written out as published, typos included (`COINSURNACE`, `PREGNACY`, a double
 * space in `SBC HAVING  DIABETES COPAYMENT`, `TEHB DED OUT COMB INN OON`): they are the format, and a
 * corrected spelling would simply not be found. The spellings differ between families of columns
 * (`TEHB DED INN TIER 1` but `MEHB DED INN TIER1`), so each family is listed with its own words.
 */
import type { ColumnDialect, DialectColumn } from '../read/dialect.ts';
import { ageOfTierRow, familyAmount, fractionOfPercent, isoDateOfUs, yesNoOfBoolean } from '../read/dialect-values.ts';

const same = (from: string): DialectColumn => ({ from });
const date = (from: string): DialectColumn => ({ from, value: isoDateOfUs });
const flag = (from: string): DialectColumn => ({ from, value: yesNoOfBoolean });

const FEDERAL_TIERS = ['InnTier1', 'InnTier2', 'OutOfNet', 'CombInnOon'] as const;
type FederalTier = (typeof FEDERAL_TIERS)[number];

/** How one family of SBE columns spells the four network tiers. */
type TierWords = Readonly<Record<FederalTier, string>>;

const MOOP_TIERS: TierWords = { InnTier1: 'INN TIER 1', InnTier2: 'INN TIER 2', OutOfNet: 'OUT OF NET', CombInnOon: 'COMB INN OON' };
const TEHB_DED_TIERS: TierWords = {
  InnTier1: 'INN TIER 1',
  InnTier2: 'INN TIER 2',
  OutOfNet: 'OUT OF NET',
  CombInnOon: 'OUT COMB INN OON',
};
const EHB_DED_TIERS: TierWords = { InnTier1: 'INN TIER1', InnTier2: 'INN TIER2', OutOfNet: 'OUT OF NET', CombInnOon: 'COMB INN OON' };

/**
 * Individual, per-person and per-group amounts of one benefit family. The SBE file has one `FAMILY`
 * cell holding both family amounts; each federal column reads its half.
 */
function amounts(federal: (tier: FederalTier, who: string) => string, sbe: (tierWords: string, who: string) => string, words: TierWords) {
  const out: Record<string, DialectColumn> = {};
  for (const tier of FEDERAL_TIERS) {
    const w = words[tier];
    out[federal(tier, 'Individual')] = same(sbe(w, 'INDIVIDUAL'));
    out[federal(tier, 'FamilyPerPerson')] = { from: sbe(w, 'FAMILY'), value: familyAmount('person') };
    out[federal(tier, 'FamilyPerGroup')] = { from: sbe(w, 'FAMILY'), value: familyAmount('group') };
  }
  return out;
}

function deductibles(prefix: 'TEHB' | 'MEHB' | 'DEHB', words: TierWords): Record<string, DialectColumn> {
  return amounts(
    (tier, who) => `${prefix}Ded${tier}${who}`,
    (w, who) => `${prefix} DED ${w} ${who}`,
    words,
  );
}

function moops(prefix: 'TEHB' | 'MEHB' | 'DEHB'): Record<string, DialectColumn> {
  return amounts(
    (tier, who) => `${prefix}${tier}${who}MOOP`,
    (w, who) => `${prefix} ${w} ${who} MOOP`,
    MOOP_TIERS,
  );
}

const SBC_SCENARIOS = { HavingaBaby: 'HAVING A BABY', HavingDiabetes: 'HAVING DIABETES', HavingSimplefracture: 'HAVING SIMPLE FRACTURE' };
const SBC_PARTS = { Deductible: 'DEDUCTIBLE', Copayment: 'COPAYMENT', Coinsurance: 'COINSURANCE', Limit: 'LIMIT' };

function sbcColumns(): Record<string, DialectColumn> {
  const out: Record<string, DialectColumn> = {};
  for (const [scenario, words] of Object.entries(SBC_SCENARIOS)) {
    for (const [part, partWords] of Object.entries(SBC_PARTS)) out[`SBC${scenario}${part}`] = same(`SBC ${words} ${partWords}`);
  }
  // Published with two spaces; the other three diabetes columns have one.
  out.SBCHavingDiabetesCopayment = same('SBC HAVING  DIABETES COPAYMENT');
  return out;
}

/** The columns every SBE file starts with: whose record it is and when CMS imported it. */
const RECORD_COLUMNS: ColumnDialect['columns'] = {
  BusinessYear: same('BUSINESS YEAR'),
  StateCode: same('STATE CODE'),
  IssuerId: same('ISSUER ID'),
  SourceName: same('SOURCE NAME'),
  ImportDate: date('IMPORT DATE'),
};

/** SBE Plans PUF (130 columns) as the federal Plan Attributes PUF. */
export const SBE_PLANS_DIALECT: ColumnDialect = {
  name: 'CMS SBE Plans PUF',
  columns: {
    ...RECORD_COLUMNS,
    IssuerMarketPlaceMarketingName: same('ISSUER NAME'),
    MarketCoverage: same('MARKET COVERAGE'),
    DentalOnlyPlan: same('DENTAL ONLY PLAN'),
    StandardComponentId: same('STANDARD COMPONENT ID'),
    PlanMarketingName: same('PLAN MARKETING NAME'),
    HIOSProductId: same('HIOS PRODUCT ID'),
    NetworkId: same('NETWORK ID'),
    ServiceAreaId: same('SERVICE AREA ID'),
    FormularyId: same('FORMULARY ID'),
    IsNewPlan: same('IS IT A NEW PLAN'),
    PlanType: same('PLAN TYPE'),
    MetalLevel: same('METAL LEVEL'),
    DesignType: same('PLAN DESIGN TYPE'),
    QHPNonQHPTypeId: same('QHP NONQHP TYPE ID'),
    IsNoticeRequiredForPregnancy: same('IS NOTICE REQUIRED FOR PREGNACY'),
    IsReferralRequiredForSpecialist: same('IS REFERRAL REQUIRED FOR SPECIALIST'),
    ChildOnlyOffering: same('CHILD ONLY OFFERING'),
    EHBPercentTotalPremium: { from: 'EHB PERCENT PREMIUM', value: fractionOfPercent },
    EHBPediatricDentalApportionmentQuantity: same('EHB PEDIATRIC DENTAL APPORTIONMENT QUANTITY'),
    PlanEffectiveDate: date('PLAN EFFECTIVE DATE'),
    PlanExpirationDate: date('PLAN EXPIRATION DATE'),
    OutOfCountryCoverage: same('OUT OF COUNTRY COVERAGE'),
    OutOfServiceAreaCoverage: same('OUT OF SERVICE AREA COVERAGE'),
    NationalNetwork: same('NATIONAL NETWORK'),
    URLForSummaryofBenefitsCoverage: same('URL FOR SUMMARY OF BENEFITS COVERAGE'),
    PlanBrochure: same('PLAN BROCHURE'),
    FormularyURL: same('FORMULARY URL'),
    PlanId: same('PLAN ID'),
    PlanVariantMarketingName: same('PLAN VARIANT MARKETING NAME'),
    CSRVariationType: same('CSR VARIATION TYPE'),
    MedicalDrugDeductiblesIntegrated: same('MEDICAL DRUG DEDUCTIBLES INTEGRATED'),
    MedicalDrugMaximumOutofPocketIntegrated: same('MEDICAL DRUG MAXIMUM OUT OF POCKET INTEGRATED'),
    BeginPrimaryCareCostSharingAfterNumberOfVisits: same('BEGIN PRIMARY CARE COST SHARING AFTER NUMBER OF VISITS'),
    BeginPrimaryCareDeductibleCoinsuranceAfterNumberOfCopays: same('BEGIN PRIMARY CARE DEDUCTIBLE COINSURANCE AFTER NUMBER OF COPAYS'),
    IsHSAEligible: same('IS HSA ELIGIBLE'),
    TEHBDedInnTier1Coinsurance: same('TEHB DED INN TIER 1 COINSURANCE'),
    MEHBDedInnTier1Coinsurance: same('MEHB DED INN TIER1 COINSURNACE'),
    DEHBDedInnTier1Coinsurance: same('DEHB DED INN TIER1 COINSURNACE'),
    ...deductibles('TEHB', TEHB_DED_TIERS),
    ...deductibles('MEHB', EHB_DED_TIERS),
    ...deductibles('DEHB', EHB_DED_TIERS),
    ...moops('TEHB'),
    ...moops('MEHB'),
    ...moops('DEHB'),
    ...sbcColumns(),
  },
};

/** SBE Rates PUF (23 columns) as the federal Rate PUF. */
export const SBE_RATES_DIALECT: ColumnDialect = {
  name: 'CMS SBE Rates PUF',
  columns: {
    ...RECORD_COLUMNS,
    RateEffectiveDate: date('RATE EFFECTIVE DATE'),
    RateExpirationDate: date('RATE EXPIRATION'),
    PlanId: same('PLAN ID'),
    RatingAreaId: same('RATING AREA ID'),
    Tobacco: same('TOBACCO'),
    Age: { from: 'AGE', value: ageOfTierRow },
    IndividualRate: same('INDIVIDUAL RATE'),
    IndividualTobaccoRate: same('INDIVIDUAL TOBACCO RATE'),
    Couple: same('COUPLE'),
    PrimarySubscriberAndOneDependent: same('PRIMARY SUBSCRIBER AND ONE DEPENDENT'),
    PrimarySubscriberAndTwoDependents: same('PRIMARY SUBSCRIBER AND TWO DEPENDENTS'),
    PrimarySubscriberAndThreeOrMoreDependents: same('PRIMARY SUBSCRIBER AND THREE OR MORE DEPENDENTS'),
    CoupleAndOneDependent: same('COUPLE AND ONE DEPENDENT'),
    CoupleAndTwoDependents: same('COUPLE AND TWO DEPENDENTS'),
    CoupleAndThreeOrMoreDependents: same('COUPLE AND THREE OR MORE DEPENDENTS'),
  },
};

/** SBE Service Areas PUF (16 columns) as the federal Service Area PUF. */
export const SBE_SERVICE_AREAS_DIALECT: ColumnDialect = {
  name: 'CMS SBE Service Areas PUF',
  columns: {
    ...RECORD_COLUMNS,
    ServiceAreaId: same('SERVICE AREA ID'),
    ServiceAreaName: same('SERVICE AREA NAME'),
    CoverEntireState: flag('COVER ENTIRE STATE'),
    County: same('COUNTY'),
    PartialCounty: flag('PARTIAL COUNTY'),
    ZipCodes: same('ZIP CODE'),
    PartialCountyJustification: same('PARTIAL COUNTY JUSTIFICATION'),
    MarketCoverage: same('MARKET COVERAGE'),
    DentalOnlyPlan: same('DENTAL PLAN ONLY'),
  },
};

/** Dialects by the name a sources file gives them (`"dialect": "sbe"`); the federal files need none. */
export const DIALECTS = {
  sbe: { plan_attributes: SBE_PLANS_DIALECT, rates: SBE_RATES_DIALECT, service_area: SBE_SERVICE_AREAS_DIALECT },
} as const;
export type DialectName = keyof typeof DIALECTS;
