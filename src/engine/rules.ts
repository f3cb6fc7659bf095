/**
 * @module Loading, validating and reading the tax-year rule tables in `data/rules/<tax-year>.json`.
 *
 * The rules are data so that a new tax year, or a retroactive law change such as an extension of the
 * enhanced credits, is a JSON edit rather than a code change. Because nothing else checks those files,
 * every load runs a strict validator: a hand-edited table that is one age band short or lost its
 * source URL must fail loudly at start-up, naming the file and the field, not skew premiums silently.
 *
 * The helpers below are pure functions of a loaded table, shared by the APTC engine and the premium
 * model so that both read FPL, age curves and applicable percentages the same way.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { AGE_BAND_COUNT } from './age-bands.ts';
import type {
  AgeCurve,
  ApplicableBand,
  ApplicablePercentageRules,
  Confidence,
  FamilyTierRules,
  FplRules,
  PovertyGuideline,
  SourceRef,
  Sourced,
  TaxYearRules,
} from './rules-types.ts';
import { InvariantError } from '../invariant.ts';
import { roundHalfUp } from './float-safe-round.ts';
import { upperCaseState } from './state-code.ts';

/** Resolved from this module so the loader works from any working directory (CLI, tests, server). */
const DEFAULT_RULES_DIR = new URL('../../data/rules/', import.meta.url);

const RULE_FILE = /^(\d{4})\.json$/;
const CONFIDENCES: readonly Confidence[] = ['V', 'V2', 'M', 'derived'];

function dirPath(dir: string | URL | undefined): string {
  const d = dir ?? DEFAULT_RULES_DIR;
  return typeof d === 'string' ? d : fileURLToPath(d);
}

/**
 * Reads and validates `<dir>/<taxYear>.json`.
 * @throws RulesValidationError naming the file (and the offending field) when the table cannot be read or
 *   does not fit `TaxYearRules`.
 */
export function loadRules(taxYear: number, dir?: string | URL): TaxYearRules {
  const file = `${taxYear}.json`;
  const label = `rules ${file}`;
  let text: string;
  try {
    text = readFileSync(join(dirPath(dir), file), 'utf8');
  } catch (err) {
    // Callers pass user-chosen years; say which years exist instead of a bare ENOENT.
    const known = safeYears(dir);
    throw new RulesValidationError(`${label}: cannot read rule table (available years: ${known.join(', ') || 'none'})`, {
      cause: err,
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new RulesValidationError(`${label}: invalid JSON: ${(err as Error).message}`, { cause: err });
  }
  const rules = validateRules(raw, label);
  // The file name is what callers select by, so a copied file with a stale tax_year must not load.
  if (rules.tax_year !== taxYear) {
    throw new RulesValidationError(`${label}: tax_year is ${rules.tax_year}, expected ${taxYear}`);
  }
  return rules;
}

/** Tax years that have a rule table in `dir`, ascending. */
export function availableRuleYears(dir?: string | URL): number[] {
  const years: number[] = [];
  for (const name of readdirSync(dirPath(dir))) {
    const m = RULE_FILE.exec(name);
    if (m) years.push(Number(m[1]));
  }
  return years.sort((a, b) => a - b);
}

function safeYears(dir: string | URL | undefined): number[] {
  try {
    return availableRuleYears(dir);
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/**
 * A rule table that cannot be used: unreadable, not JSON, another tax year, or a field that does not fit.
 * The message is one line naming the file (and the field): the CLI prints it as it is, and the data
 * compiler reports it as HPD_BUILD_BAD_FORMAT.
 */
export class RulesValidationError extends Error {
  override name = 'RulesValidationError';
}

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Carries the file label and the dotted path so every message reads `rules 2026.json: a.b must …`. */
class Ctx {
  readonly label: string;
  readonly path: string;
  constructor(label: string, path: string) {
    this.label = label;
    this.path = path;
  }
  at(key: string): Ctx {
    return new Ctx(this.label, this.path ? `${this.path}.${key}` : key);
  }
  fail(msg: string): never {
    throw new RulesValidationError(`${this.label}: ${this.path || '(root)'} ${msg}`);
  }
}

function obj(v: unknown, c: Ctx, allowed: readonly string[]): Json {
  if (!isRecord(v)) c.fail('must be an object');
  // Unknown keys are almost always typos ("soruces", "to_pc"), which would otherwise drop a value silently.
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) c.at(k).fail('is not a known field');
  }
  return v;
}

function num(v: unknown, c: Ctx, opts: { min?: number; positive?: boolean; integer?: boolean } = {}): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) c.fail('must be a finite number');
  if (opts.integer && !Number.isInteger(v)) c.fail('must be an integer');
  if (opts.positive && !(v > 0)) c.fail('must be positive');
  if (opts.min !== undefined && v < opts.min) c.fail(`must be at least ${opts.min}`);
  return v;
}

function isHttpUrl(s: unknown): boolean {
  if (typeof s !== 'string') return false;
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

const SOURCE_KEYS = ['sources', 'confidence', 'note'] as const;

function sourceRef(o: Json, c: Ctx): SourceRef {
  const sources = o.sources;
  // The point of the tables is that a reviewer can check each figure; a value without a URL is unreviewable.
  if (!Array.isArray(sources) || sources.length === 0 || !sources.every(isHttpUrl)) {
    c.at('sources').fail('must be a non-empty array of http(s) URLs');
  }
  const confidence = o.confidence;
  if (typeof confidence !== 'string' || !(CONFIDENCES as readonly string[]).includes(confidence)) {
    c.at('confidence').fail(`must be one of ${CONFIDENCES.join(', ')}`);
  }
  if (o.note !== undefined && typeof o.note !== 'string') c.at('note').fail('must be a string');
  return {
    sources: sources as string[],
    confidence: confidence as Confidence,
    ...(o.note === undefined ? {} : { note: o.note as string }),
  };
}

function sourced<T>(v: unknown, c: Ctx, value: (x: unknown, c: Ctx) => T): Sourced<T> {
  const o = obj(v, c, [...SOURCE_KEYS, 'value']);
  if (!('value' in o)) c.at('value').fail('is missing');
  return { ...sourceRef(o, c), value: value(o.value, c.at('value')) };
}

function guideline(v: unknown, c: Ctx): PovertyGuideline {
  const o = obj(v, c, ['first_person', 'additional_person']);
  return {
    first_person: num(o.first_person, c.at('first_person'), { positive: true }),
    additional_person: num(o.additional_person, c.at('additional_person'), { positive: true }),
  };
}

function fpl(v: unknown, c: Ctx): FplRules {
  const o = obj(v, c, [...SOURCE_KEYS, 'guideline_year', 'contiguous', 'AK', 'HI']);
  return {
    ...sourceRef(o, c),
    guideline_year: num(o.guideline_year, c.at('guideline_year'), { integer: true, min: 1900 }),
    contiguous: guideline(o.contiguous, c.at('contiguous')),
    AK: guideline(o.AK, c.at('AK')),
    HI: guideline(o.HI, c.at('HI')),
  };
}

function applicable(v: unknown, c: Ctx): ApplicablePercentageRules {
  const o = obj(v, c, [...SOURCE_KEYS, 'bands']);
  const bc: Ctx = c.at('bands');
  if (!Array.isArray(o.bands) || o.bands.length === 0) bc.fail('must be a non-empty array');
  const list: readonly unknown[] = o.bands;
  const bands: ApplicableBand[] = [];
  list.forEach((raw, i) => {
    const b: Ctx = bc.at(String(i));
    const bo = obj(raw, b, ['from_pct', 'to_pct', 'initial_pct', 'final_pct']);
    const from = num(bo.from_pct, b.at('from_pct'), { min: 0 });
    const to = bo.to_pct === null ? null : num(bo.to_pct, b.at('to_pct'));
    const initial = num(bo.initial_pct, b.at('initial_pct'), { min: 0 });
    const final = num(bo.final_pct, b.at('final_pct'), { min: 0 });
    if (to !== null && !(to > from)) b.at('to_pct').fail(`must be greater than from_pct (${from})`);
    // An open-ended band has no width to interpolate across.
    if (to === null && initial !== final) b.fail('has no upper end, so initial_pct must equal final_pct');
    if (to === null && i !== list.length - 1) b.at('to_pct').fail('may be null only in the last band');
    const prev = bands[i - 1];
    // A gap or overlap would leave some %FPL with no percentage, or two.
    if (prev && prev.to_pct !== from) {
      b.at('from_pct').fail(`must equal the previous band's to_pct (${prev.to_pct}): bands must be contiguous and ascending`);
    }
    bands.push({ from_pct: from, to_pct: to, initial_pct: initial, final_pct: final });
  });
  return { ...sourceRef(o, c), bands };
}

function ageCurve(v: unknown, c: Ctx, nonDecreasing: boolean): AgeCurve {
  const o = obj(v, c, [...SOURCE_KEYS, 'factors']);
  const fc: Ctx = c.at('factors');
  if (!Array.isArray(o.factors)) fc.fail('must be an array');
  const list: readonly unknown[] = o.factors;
  if (list.length !== AGE_BAND_COUNT) fc.fail(`must have ${AGE_BAND_COUNT} entries`);
  const factors = list.map((f, i) => num(f, fc.at(String(i)), { positive: true }));
  if (nonDecreasing) {
    // The federal curve only rises with age; a dip means a transposed or shifted row.
    for (let i = 1; i < factors.length; i++) {
      if (factors[i] < factors[i - 1]) fc.at(String(i)).fail(`must not be below the previous factor (${factors[i - 1]})`);
    }
  }
  return { ...sourceRef(o, c), factors };
}

const STATE_CODE = /^[A-Z]{2}$/;

function byState<T>(v: unknown, c: Ctx, each: (x: unknown, c: Ctx) => T): Record<string, T> {
  if (!isRecord(v)) c.fail('must be an object');
  const out: Record<string, T> = {};
  for (const [k, x] of Object.entries(v)) {
    // Lookups upper-case the state, so a lower-case key would never be found.
    if (!STATE_CODE.test(k)) c.at(k).fail('must be keyed by a two-letter upper-case state code');
    out[k] = each(x, c.at(k));
  }
  return out;
}

function familyTier(v: unknown, c: Ctx): FamilyTierRules {
  const o = obj(v, c, [...SOURCE_KEYS, 'one_adult', 'two_adults', 'one_adult_and_children', 'two_adults_and_children', 'child_only']);
  if (!('child_only' in o)) c.at('child_only').fail('is missing (use null when the state has no child-only tier)');
  return {
    ...sourceRef(o, c),
    one_adult: num(o.one_adult, c.at('one_adult'), { positive: true }),
    two_adults: num(o.two_adults, c.at('two_adults'), { positive: true }),
    one_adult_and_children: num(o.one_adult_and_children, c.at('one_adult_and_children'), { positive: true }),
    two_adults_and_children: num(o.two_adults_and_children, c.at('two_adults_and_children'), { positive: true }),
    child_only: o.child_only === null ? null : num(o.child_only, c.at('child_only'), { positive: true }),
  };
}

/**
 * Checks that parsed JSON fits `TaxYearRules` and returns it typed.
 * @param label prefix of every error message, e.g. `rules 2026.json`.
 * @throws RulesValidationError `rules 2026.json: age_curves.default.factors must have 51 entries`
 */
export function validateRules(raw: unknown, label: string): TaxYearRules {
  const c = new Ctx(label, '');
  const o = obj(raw, c, [
    'tax_year',
    'fpl',
    'applicable_percentage',
    'lower_bound_pct',
    'cap_at_400_fpl',
    'required_contribution_pct',
    'max_rated_children',
    'child_age_limit',
    'moop_limit',
    'age_curves',
    'family_tiers',
  ]);
  const curves = obj(o.age_curves, c.at('age_curves'), ['default', 'states']);
  const bool = (x: unknown, cc: Ctx): boolean => (typeof x === 'boolean' ? x : cc.fail('must be a boolean'));
  return {
    tax_year: num(o.tax_year, c.at('tax_year'), { integer: true, min: 2014 }),
    fpl: fpl(o.fpl, c.at('fpl')),
    applicable_percentage: applicable(o.applicable_percentage, c.at('applicable_percentage')),
    lower_bound_pct: sourced(o.lower_bound_pct, c.at('lower_bound_pct'), (x, cc) => num(x, cc, { min: 0 })),
    cap_at_400_fpl: sourced(o.cap_at_400_fpl, c.at('cap_at_400_fpl'), bool),
    required_contribution_pct: sourced(o.required_contribution_pct, c.at('required_contribution_pct'), (x, cc) =>
      num(x, cc, { positive: true }),
    ),
    max_rated_children: sourced(o.max_rated_children, c.at('max_rated_children'), (x, cc) => num(x, cc, { integer: true, positive: true })),
    child_age_limit: sourced(o.child_age_limit, c.at('child_age_limit'), (x, cc) => num(x, cc, { integer: true, positive: true })),
    moop_limit: sourced(o.moop_limit, c.at('moop_limit'), (x, cc) => {
      const m = obj(x, cc, ['self_only', 'other_than_self_only']);
      return {
        self_only: num(m.self_only, cc.at('self_only'), { positive: true }),
        other_than_self_only: num(m.other_than_self_only, cc.at('other_than_self_only'), { positive: true }),
      };
    }),
    age_curves: {
      default: ageCurve(curves.default, c.at('age_curves').at('default'), true),
      states: byState(curves.states, c.at('age_curves').at('states'), (x, cc) => ageCurve(x, cc, false)),
    },
    family_tiers: byState(o.family_tiers, c.at('family_tiers'), familyTier),
  };
}

// ---------------------------------------------------------------------------------------------
// Pure helpers
// ---------------------------------------------------------------------------------------------

/**
 * Annual 100 % poverty guideline for a household in `state` (HHS: guideline(n) = first + (n − 1) × additional).
 * Alaska and Hawaii have their own, higher tables; every other code, DC included, uses the contiguous one.
 */
export function povertyGuideline(rules: TaxYearRules, state: string, householdSize: number): number {
  if (!Number.isInteger(householdSize) || householdSize < 1) {
    // The operations' query schemas refuse such values first: reaching this is a caller's bug.
    throw new InvariantError(`householdSize must be a positive integer, got ${householdSize}`);
  }
  const st = upperCaseState(state);
  const g = st === 'AK' ? rules.fpl.AK : st === 'HI' ? rules.fpl.HI : rules.fpl.contiguous;
  return g.first_person + (householdSize - 1) * g.additional_person;
}

/** The age curve that rates premiums in `state`: its own if it established one, else the federal default. */
export function ageCurveFor(rules: TaxYearRules, state: string): AgeCurve {
  return rules.age_curves.states[upperCaseState(state)] ?? rules.age_curves.default;
}

/** Rounds half up to hundredths; toPrecision first absorbs float error, so 8.475 (847.4999… × 100) gives 8.48. */
function round2(x: number): number {
  return roundHalfUp(x * 100) / 100;
}

/**
 * Applicable percentage (percent of household income, e.g. 8.59) for a household at `pctFplTruncated`,
 * the %FPL with decimals dropped as on Form 8962 line 5 (401 when income exceeds 4 × FPL).
 *
 * Inside a band the percentage rises linearly and is rounded to the nearest hundredth of a percent
 * (26 CFR 1.36B-3(g)(1)). Below the lowest band the first band's initial percentage applies, because
 * eligibility below 100 % FPL is decided elsewhere and this function only prices a contribution.
 *
 * @returns null when the year has the 400 % cliff and the household is above it (no credit).
 */
export function applicablePercentage(rules: TaxYearRules, pctFplTruncated: number): number | null {
  const pct = pctFplTruncated;
  // NaN would fall through every band comparison and silently price as the first band.
  // The operations' query schemas refuse such values first: reaching this is a caller's bug.
  if (!Number.isFinite(pct)) throw new InvariantError(`pctFplTruncated must be a finite number, got ${pct}`);
  if (rules.cap_at_400_fpl.value && pct > 400) return null;
  const bands = rules.applicable_percentage.bands;
  const first = bands[0];
  if (pct < first.from_pct) return round2(first.initial_pct);
  // An index loop: for-of made an iterator per estimate.
  for (let i = 0; i < bands.length; i++) {
    const b = bands[i]!;
    if (pct < b.from_pct) continue;
    if (b.to_pct !== null && pct >= b.to_pct) continue;
    if (b.to_pct === null || b.initial_pct === b.final_pct) return round2(b.initial_pct);
    return round2(b.initial_pct + ((pct - b.from_pct) / (b.to_pct - b.from_pct)) * (b.final_pct - b.initial_pct));
  }
  // Only reachable when the top band is closed and the year has no cliff: the top rate keeps applying.
  return round2(bands[bands.length - 1].final_pct);
}
