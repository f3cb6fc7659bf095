/**
 * @module Writes a plan search page (src/operations/search-page.ts) as the bytes of its JSON body and
 * of its Link header, straight from the model: rows from the catalog's pre-encoded fragments and the
 * premiums in cents, links from the request's echoed parameters, written once and copied. The bytes
 * are those JSON.stringify gives for the model's toBody() (test/http/search-page-writer.test.ts).
 */
import type { HouseholdRater } from '../engine/household-rater.ts';
import { SUMMARY_JSON } from '../operations/plan-catalog.ts';
import type { SearchPageModel } from '../operations/search-page.ts';
import { ByteWriter, latin1Bytes } from '../encoding/byte-writer.ts';
import { writeLocationMembers } from './location-writer.ts';
import { echoMembers, writeEchoes } from './query-echo.ts';

const ascii = latin1Bytes;
const T = {
  selfOpen: ascii('{"_links":{"self":{"href":"'),
  selfClose: ascii('","type":"application/json"},"first":{"href":"'),
  nextOpen: ascii('"},"next":{"href":"'),
  prevOpen: ascii('"},"prev":{"href":"'),
  lastOpen: ascii('"},"last":{"href":"'),
  detailOpen: ascii('"},"plan_detail":{"href":"'),
  detailPath: ascii('/{plan_id}?year='),
  statsOpen: ascii('","templated":true},"stats":{"href":"'),
  statsPath: ascii('/stats'),
  plansOpen: ascii('","type":"application/json"}},"_embedded":{"plans":['),
  total: ascii(']},"total":'),
  page: ascii(',"page":'),
  perPage: ascii(',"per_page":'),
  pageSize: ascii(',"page_size":'),
  nextCursor: ascii(',"next_cursor":'),
  members: ascii(',"members":'),
  memberAge: ascii('{"age":'),
  chargedTrue: ascii(',"charged":true}'),
  chargedFalse: ascii(',"charged":false}'),
  comma: ascii(','),
  planYear: ascii(',"plan_year":'),
  dataSource: ascii(',"data_source":'),
  dataFreshness: ascii(',"data_freshness":'),
  credit: ascii(',"premium_with_credit":'),
  null: ascii('null'),
  page1: ascii('page=1'),
  pageEq: ascii('page='),
  cursorEq: ascii('cursor='),
  relSelf: ascii('>; rel="self", <'),
  relFirst: ascii('>; rel="first", <'),
  relNext: ascii('>; rel="next", <'),
  relPrev: ascii('>; rel="prev", <'),
  relLast: ascii('>; rel="last", <'),
  relStats: ascii('>; rel="stats", <'),
  relService: ascii('>; rel="service-desc"'),
} as const;

/** The collection's URL, as JSON string content and as itself; made again only when the base URL changes. */
let base = { url: '', json: Buffer.alloc(0), raw: Buffer.alloc(0) };
function baseOf(baseUrl: string): typeof base {
  if (base.url !== baseUrl) {
    const url = `${baseUrl}/v1/health/plans`;
    base = { url: baseUrl, json: Buffer.from(JSON.stringify(url).slice(1, -1)), raw: Buffer.from(url) };
  }
  return base;
}

/**
 * The links' query strings, reused by every page of this thread: the self link's (every name sent),
 * the other collection links' (all but page and cursor), the stats link's (location, age, filters).
 */
const SELF = new ByteWriter(1 << 12);
const REST = new ByteWriter(1 << 12);
const STATS = new ByteWriter(1 << 12);
const ECHOES = [SELF, REST, STATS];
const HAS_REST = 1 << 1;

/** Which echo each name of a model's self order goes into (writeEchoes' bits), by that order. */
const MEMBERS = new WeakMap<readonly string[], Uint8Array>();
function membersOf(m: SearchPageModel): Uint8Array {
  let members = MEMBERS.get(m.selfOrder);
  if (members === undefined) {
    members = echoMembers(m.selfOrder, [m.selfOrder, m.linkOrder, m.statsOrder]);
    MEMBERS.set(m.selfOrder, members);
  }
  return members;
}

/** The page being written: its base URL, the separator before a link's own parameter. */
const at = { base, restSep: 63 };

/**
 * One href of the collection into `w`: base, an echoed query, then the link's own parameter: a page
 * number, or the bytes of a writer (the cursor, base64url: URL-safe as it is).
 */
function hrefInto(w: ByteWriter, url: Buffer, echo: ByteWriter, key: Buffer | null, value: number | ByteWriter | null): void {
  w.bytes(url);
  w.copyFrom(echo, 0, echo.at);
  if (key === null) return;
  w.byte(at.restSep);
  w.bytes(key);
  if (typeof value === 'number') w.uint(value);
  else if (value !== null) w.copyFrom(value, 0, value.at);
}

/** A link after self: the same href in the body and in the Link header (with its rel). */
function otherLink(body: ByteWriter, link: ByteWriter, open: Buffer, key: Buffer, value: number | ByteWriter | null, rel: Buffer): void {
  body.bytes(open);
  hrefInto(body, at.base.json, REST, key, value);
  hrefInto(link, at.base.raw, REST, key, value);
  link.bytes(rel);
}

/** Writes the body of `m` into `body` and its Link header value (for `serviceDesc`) into `link`, both reset first. */
export function writeSearchPage(m: SearchPageModel, body: ByteWriter, link: ByteWriter, serviceDesc: string): void {
  body.reset();
  link.reset();
  SELF.reset();
  REST.reset();
  STATS.reset();
  at.base = baseOf(m.baseUrl);
  at.restSep = (writeEchoes(ECHOES, m.selfOrder, membersOf(m), m.meta.raw) & HAS_REST) !== 0 ? 38 : 63; // & ?
  body.bytes(T.selfOpen);
  hrefInto(body, at.base.json, SELF, null, null);
  link.byte(60); // <
  hrefInto(link, at.base.raw, SELF, null, null);
  link.bytes(T.relSelf);
  otherLink(body, link, T.selfClose, T.page1, null, T.relFirst);
  if (m.cursor.at > 0) otherLink(body, link, T.nextOpen, T.cursorEq, m.cursor, T.relNext);
  const prev = m.prevPage;
  if (prev !== 0) otherLink(body, link, T.prevOpen, T.pageEq, prev, T.relPrev);
  if (m.total !== null) otherLink(body, link, T.lastOpen, T.pageEq, m.lastPage, T.relLast);
  // The stats resource takes the search's location, age and filters: an href of its own.
  link.bytes(at.base.raw);
  link.bytes(T.statsPath);
  link.copyFrom(STATS, 0, STATS.at);
  link.bytes(T.relStats);
  link.latin1(serviceDesc);
  link.bytes(T.relService);
  body.bytes(T.detailOpen);
  body.bytes(at.base.json);
  body.bytes(T.detailPath);
  body.uint(m.params.year);
  body.bytes(T.statsOpen);
  body.bytes(at.base.json);
  body.bytes(T.statsPath);
  body.copyFrom(STATS, 0, STATS.at);
  body.bytes(T.plansOpen);
  writeRows(m, body);
  writeEnvelopeTail(m, body);
}

/** The plans: each its fragments with the two premiums written in. */
function writeRows(m: SearchPageModel, w: ByteWriter): void {
  const count = m.rowCount;
  const cents = m.rows.premiumCents;
  for (let i = 0; i < count; i++) {
    if (i > 0) w.byte(44); // ,
    const parts = m.parts(i);
    const f = parts[SUMMARY_JSON];
    w.bytes(f.prefixBytes);
    w.cents(cents[i]!);
    const credit = m.creditCents(i, parts);
    if (credit < 0) {
      w.bytes(f.nullCreditSuffixBytes);
      continue;
    }
    w.bytes(T.credit);
    w.cents(credit);
    w.bytes(f.suffixBytes);
  }
}

/** A household's members as JSON.stringify writes `[{age, charged}, …]` (search-page.ts members). */
function writeMembers(w: ByteWriter, rater: HouseholdRater): void {
  const counted = rater.rating.counted;
  const ages = rater.ages;
  w.byte(91); // [
  for (let i = 0; i < ages.length; i++) {
    if (i > 0) w.byte(44); // ,
    w.bytes(T.memberAge);
    w.uint(ages[i]!);
    w.bytes(counted === null || counted[i] === true ? T.chargedTrue : T.chargedFalse);
  }
  w.byte(93); // ]
}

function writeNullable(w: ByteWriter, n: number | null): void {
  if (n === null) w.bytes(T.null);
  else w.uint(n);
}

/** From `total` to the end of the body. */
function writeEnvelopeTail(m: SearchPageModel, w: ByteWriter): void {
  w.bytes(T.total);
  writeNullable(w, m.total);
  w.bytes(T.page);
  writeNullable(w, m.page);
  w.bytes(T.perPage);
  w.uint(m.params.per_page);
  if (m.pageSizeAlias) {
    w.bytes(T.pageSize);
    w.uint(m.params.per_page);
  }
  if (m.cursor.at > 0) {
    w.bytes(T.nextCursor);
    w.byte(34); // "
    w.copyFrom(m.cursor, 0, m.cursor.at);
    w.byte(34);
  }
  if (m.rater !== null) {
    w.bytes(T.members);
    writeMembers(w, m.rater);
  }
  w.bytes(T.comma);
  writeLocationMembers(w, m.where);
  w.bytes(T.planYear);
  w.uint(m.params.year);
  w.bytes(T.dataSource);
  w.jsonConstant(m.dataSource);
  w.bytes(T.dataFreshness);
  w.jsonConstant(m.dataFreshness);
  w.byte(125); // }
}
