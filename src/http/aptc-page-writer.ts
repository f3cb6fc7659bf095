/**
 * @module Writes an APTC estimate (src/operations/aptc-page.ts) as the bytes of its JSON body and of
 * its Link header, from the model: the bytes the response schema's serializer makes of toBody(), in
 * the schema's member order (test/http/aptc-page-writer.test.ts), without the body as objects or as
 * a string.
 */
import { EHB_NOTE, type LowestPlan } from '../engine/subsidy.ts';
import { BENCHMARK_WORDS, type AptcPageModel } from '../operations/aptc-page.ts';
import { latin1Bytes, type ByteWriter } from '../encoding/byte-writer.ts';
import { writeLocationMembers } from './location-writer.ts';
import { writeEchoes } from './query-echo.ts';

const ascii = latin1Bytes;
const T = {
  // The wording has nothing JSON escapes, so its parts go in as they are.
  ehbNoteBefore: ascii(EHB_NOTE.before),
  ehbNoteAfterShare: ascii(EHB_NOTE.afterShare),
  ehbNoteBetween: ascii(EHB_NOTE.between),
  ehbNoteAfter: ascii(EHB_NOTE.after),
  selfOpen: ascii('{"_links":{"self":{"href":"'),
  path: ascii('/v1/health/plans/aptc-estimate'),
  selfClose: ascii('","type":"application/json"}'),
  searchOpen: ascii(',"search":{"href":"'),
  searchZip: ascii('/v1/health/plans?zip='),
  searchIncome: ascii('&income='),
  searchSize: ascii('&household_size='),
  searchClose: ascii('{&age}","templated":true}'),
  yearsOpen: ascii(',"plan_data_years":['),
  yearHref: ascii('{"href":"'),
  yearTitle: ascii('","title":"PY'),
  aptc: ascii('},"aptc_amount":'),
  benchmark: ascii(',"benchmark_premium":'),
  ehbPremium: ascii(',"benchmark_ehb_premium":'),
  ehbShare: ascii(',"benchmark_ehb_share":'),
  description: ascii(',"benchmark_plan_description":"'),
  ratingArea: ascii(' (Rating Area '),
  /** Not a required member: the serializer writes such members after the required ones. */
  planId: ascii(',"benchmark_plan_id":'),
  household: ascii('","household":{"income":'),
  size: ascii(',"size":'),
  fplAmount: ascii(',"fpl_amount":'),
  fplPct: ascii(',"fpl_percentage":'),
  fplExact: ascii(',"fpl_percentage_exact":'),
  fplBand: ascii(',"fpl_band":'),
  applicable: ascii(',"applicable_percentage":'),
  yearly: ascii(',"expected_yearly_contribution":'),
  monthly: ascii(',"expected_monthly_contribution":'),
  members: ascii('},"members":['),
  age: ascii('{"age":'),
  slcsp: ascii(',"slcsp_premium":'),
  counted: ascii(',"counted_in_benchmark":'),
  basis: ascii(',"premium_basis":'),
  location: ascii('],"location":{'),
  eligible: ascii('},"eligible":'),
  source: ascii(',"benchmark_source":'),
  csrLevel: ascii(',"csr_level":'),
  csrBand: ascii(',"csr_band":'),
  lcspId: ascii(',"lcsp_plan_id":'),
  lcspPremium: ascii(',"lcsp_premium":'),
  lcbpId: ascii(',"lcbp_plan_id":'),
  lcbpPremium: ascii(',"lcbp_premium":'),
  notes: ascii(',"notes":['),
  planYear: ascii('],"plan_year":'),
  dataYears: ascii(',"plan_data_years":['),
  benchmarkData: ascii('],"benchmark_data":'),
  bdTitle: ascii('{"title":'),
  bdFile: ascii(',"file":'),
  bdUrl: ascii(',"url":'),
  bdSha: ascii(',"sha256":'),
  bdInForce: ascii(',"in_force":'),
  dataSource: ascii(',"data_source":'),
  dataFreshness: ascii(',"data_freshness":'),
  relSelf: ascii('>; rel="self", <'),
  relService: ascii('>; rel="service-desc"'),
  comma: ascii(', '),
  null: ascii('null'),
  true: ascii('true'),
  false: ascii('false'),
} as const;

function bool(w: ByteWriter, b: boolean): void {
  w.bytes(b ? T.true : T.false);
}

function nullableNumber(w: ByteWriter, n: number | null): void {
  if (n === null) w.bytes(T.null);
  else w.number(n);
}

function nullableString(w: ByteWriter, s: string | null): void {
  if (s === null) w.bytes(T.null);
  else w.jsonString(s);
}

/** A text from a small set that recurs across responses (labels, the build's benchmark source). */
function nullableConstant(w: ByteWriter, s: string | null): void {
  if (s === null) w.bytes(T.null);
  else w.jsonConstant(s);
}

/** The writers the self link's echo goes into, both taking every name: the body and the Link header. */
const echoInto: ByteWriter[] = [];

/** Writes the body of `m` into `body` and its Link header value (for `serviceDesc`) into `link`, both reset first. */
export function writeAptcPage(m: AptcPageModel, body: ByteWriter, link: ByteWriter, serviceDesc: string): void {
  body.reset();
  link.reset();
  body.bytes(T.selfOpen);
  body.jsonContent(m.baseUrl);
  body.bytes(T.path);
  // The Link header carries the same href, unescaped (the echo is JSON-safe: the same bytes).
  link.byte(60); // <
  link.utf8(m.baseUrl);
  link.bytes(T.path);
  echoInto[0] = body;
  echoInto[1] = link;
  writeEchoes(echoInto, m.selfOrder, null, m.meta.raw);
  link.bytes(T.relSelf);
  link.latin1(serviceDesc);
  link.bytes(T.relService);
  body.bytes(T.selfClose);
  if (m.plansHere) {
    const p = m.params;
    body.bytes(T.searchOpen);
    body.jsonContent(m.baseUrl);
    body.bytes(T.searchZip);
    body.jsonContent(p.zip);
    body.bytes(T.searchIncome);
    body.number(p.household_income);
    body.bytes(T.searchSize);
    body.uint(p.household_size);
    body.bytes(T.searchClose);
  }
  const years = m.linkedYears;
  if (years.length > 0) {
    body.bytes(T.yearsOpen);
    for (let i = 0; i < years.length; i++) {
      if (i > 0) body.byte(44);
      body.bytes(T.yearHref);
      body.jsonContent(m.hrefInYear(years[i]!));
      body.bytes(T.yearTitle);
      body.uint(years[i]!);
      body.latin1('"}');
    }
    body.byte(93); // ]
  }
  writeFigures(m, body);
  writeTail(m, body);
}

/** From `aptc_amount` to the end of `members`. */
function writeFigures(m: AptcPageModel, w: ByteWriter): void {
  const { est, params: p, where } = m;
  w.bytes(T.aptc);
  w.number(est.aptc_amount);
  w.bytes(T.benchmark);
  w.number(est.benchmark_premium ?? 0);
  w.bytes(T.ehbPremium);
  nullableNumber(w, est.benchmark_ehb_premium);
  w.bytes(T.ehbShare);
  nullableNumber(w, est.benchmark_ehb_share);
  w.bytes(T.description);
  const words = m.wording;
  w.jsonContent(words.before);
  w.jsonContent(where.loc.countyName);
  w.bytes(T.comma);
  w.jsonContent(where.loc.state);
  w.bytes(T.ratingArea);
  w.uint(where.loc.ratingArea);
  w.byte(41); // )
  w.jsonContent(words.after);
  if (words === BENCHMARK_WORDS.benchmarkOnly) w.jsonContent(where.loc.state);
  w.bytes(T.household);
  w.number(p.household_income);
  w.bytes(T.size);
  w.uint(p.household_size);
  w.bytes(T.fplAmount);
  w.number(est.fpl_amount);
  w.bytes(T.fplPct);
  w.uint(est.fpl_percentage_truncated);
  w.bytes(T.fplExact);
  w.number(est.fpl_percentage);
  w.bytes(T.fplBand);
  nullableConstant(w, est.band_label);
  w.bytes(T.applicable);
  if (est.applicable_percentage === null) w.bytes(T.null);
  else w.number(est.applicable_percentage);
  w.bytes(T.yearly);
  w.number(est.yearly_contribution);
  w.bytes(T.monthly);
  w.number(est.monthly_contribution);
  w.bytes(T.members);
  for (let i = 0; i < est.members.length; i++) {
    const member = est.members[i]!;
    if (i > 0) w.byte(44);
    w.bytes(T.age);
    w.uint(member.age);
    w.bytes(T.slcsp);
    w.number(member.slcsp_premium);
    w.bytes(T.counted);
    bool(w, member.counted_in_benchmark);
    w.bytes(T.basis);
    w.jsonConstant(member.premium_basis);
    w.byte(125); // }
  }
}

/** A lowest-cost plan's id and premium members, both null when there is none. */
function writeLowest(w: ByteWriter, idName: Uint8Array, premiumName: Uint8Array, plan: LowestPlan | null): void {
  w.bytes(idName);
  nullableString(w, plan === null ? null : plan.plan_id);
  w.bytes(premiumName);
  if (plan === null) w.bytes(T.null);
  else w.number(plan.premium);
}

/** The EHB note as JSON (subsidy.ts ehbNoteText's text), written from its figures. */
function writeEhbNote(w: ByteWriter, percent: number, ehbCents: number, benchmarkCents: number): void {
  w.byte(34); // "
  w.bytes(T.ehbNoteBefore);
  w.number(percent);
  w.bytes(T.ehbNoteAfterShare);
  dollarsFixed2(w, ehbCents);
  w.bytes(T.ehbNoteBetween);
  dollarsFixed2(w, benchmarkCents);
  w.bytes(T.ehbNoteAfter);
  w.byte(34);
}

/** `(cents / 100).toFixed(2)`: digits for whole cents (what the estimates hold), toFixed otherwise. */
function dollarsFixed2(w: ByteWriter, cents: number): void {
  if (!Number.isSafeInteger(cents) || cents < 0) {
    w.latin1((cents / 100).toFixed(2));
    return;
  }
  const c = cents % 100;
  w.uint((cents - c) / 100);
  w.byte(46); // .
  w.byte(48 + Math.floor(c / 10));
  w.byte(48 + (c % 10));
}

/** From `location` to the end of the body. */
function writeTail(m: AptcPageModel, w: ByteWriter): void {
  const { est, where } = m;
  const loc = where.loc;
  w.bytes(T.location);
  writeLocationMembers(w, where);
  w.bytes(T.eligible);
  bool(w, est.eligible);
  w.bytes(T.source);
  nullableConstant(w, est.benchmark_source);
  w.bytes(T.csrLevel);
  if (est.csr_level === null) w.bytes(T.null);
  else w.uint(est.csr_level);
  w.bytes(T.csrBand);
  nullableConstant(w, est.csr_band_label);
  writeLowest(w, T.lcspId, T.lcspPremium, est.lowest_silver);
  writeLowest(w, T.lcbpId, T.lcbpPremium, est.lowest_bronze);
  w.bytes(T.notes);
  const lead = est.leadingNotes;
  for (let i = 0; i < lead.length; i++) {
    if (i > 0) w.byte(44);
    w.jsonConstant(lead[i]!);
  }
  if (!Number.isNaN(est.ehbNotePercent)) {
    if (lead.length > 0) w.byte(44);
    writeEhbNote(w, est.ehbNotePercent, est.ehbNoteCents, est.benchmarkCents);
  }
  w.bytes(T.planYear);
  w.uint(m.params.year);
  w.bytes(T.dataYears);
  for (let i = 0; i < m.planDataYears.length; i++) {
    if (i > 0) w.byte(44);
    w.uint(m.planDataYears[i]!);
  }
  w.bytes(T.benchmarkData);
  const b = m.benchmarkData;
  if (b === null) w.bytes(T.null);
  else {
    w.bytes(T.bdTitle);
    w.jsonConstant(b.title);
    w.bytes(T.bdFile);
    w.jsonConstant(b.file);
    w.bytes(T.bdUrl);
    nullableConstant(w, b.url);
    w.bytes(T.bdSha);
    w.jsonConstant(b.sha256);
    w.bytes(T.bdInForce);
    nullableConstant(w, b.in_force);
    w.byte(125);
  }
  w.bytes(T.dataSource);
  w.jsonConstant(m.yd.dataSource(loc.state));
  w.bytes(T.dataFreshness);
  w.jsonConstant(m.yd.freshness(loc.state));
  w.bytes(T.planId);
  nullableString(w, est.benchmark_plan_id);
  w.byte(125);
}
