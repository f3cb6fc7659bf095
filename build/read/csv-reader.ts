/**
 * @module Streaming RFC 4180 CSV parser of the data compiler.
 *
 * CMS public use files reach ~400 MB, so the parser works one input chunk at a time and never holds the whole
 * file as one string; only the record that straddles a chunk boundary is carried over. It yields one batch of
 * records per input chunk because an `await` per record would cost more than the parsing itself.
 *
 * Physical line numbers are tracked (CRLF, LF and lone CR each end one line, also inside quoted fields) so that a
 * diagnostic points at the line an operator sees in an editor, not at a record ordinal.
 *
 * Fields are returned raw: enclosing quotes are removed and doubled quotes undone, but nothing is trimmed,
 * because deciding what whitespace means is the value parsers' job and the raw text is what a diagnostic quotes.
 *
 * Why not a library: speed. csv-parse 7.0.3, the usual Node parser, also gives line numbers
 * (`info: true`) and positioned errors, but on the PY2025 Plan Attributes PUF (35.5 MB, 24,528 lines × 151
 * columns, read in 64 KiB chunks) it takes 1,677 ms of CPU where this parser takes 321 ms (21 vs 111 MB/s), and
 * 122 vs 20 ms on the Service Area PUF (1.2 MB); `bench/csv-reader.bench.ts`, 2026-11, shared 2-core machine.
 * The Plan Attributes file is read in every build, so a library would add over a second per year built.
 */
import { DIAGNOSTIC_CODES, FatalBuildError } from './diagnostics.ts';

export interface CsvRecord {
  readonly fields: string[];
  /** 1-based physical line on which the record starts; the header is line 1. */
  readonly line: number;
}

const LF = 10;
const CR = 13;
const QUOTE = 34;
const COMMA = 44;
const BOM = 0xfeff;
/** Largest piece of text parsed into one batch (see csvRecords). */
const MAX_BATCH_CHARS = 1 << 17;
/**
 * Longest field accepted. Real fields are at most a few KiB; without a cap an unterminated quote or a file with
 * no line breaks would gather the rest of a 400 MB input into one string before failing.
 */
const MAX_FIELD_CHARS = 1 << 24;

/** Where the parser stands between two characters; kept across chunks so a record may straddle any boundary. */
const STATE = {
  /** Before the first character of a record (or of a blank line). */
  recordStart: 0,
  /** After a comma: the next field may be quoted or not. */
  fieldStart: 1,
  /** Inside an unquoted field whose text so far is in `field`. */
  unquoted: 2,
  /** Inside a quoted field whose text so far is in `field`. */
  quoted: 3,
  /** Just after a quote inside a quoted field: a closing quote or the first half of a doubled one. */
  quoteInQuoted: 4,
} as const;
type State = (typeof STATE)[keyof typeof STATE];

/**
 * The resumable state machine. Scanning uses `indexOf` with cached "next occurrence" positions, so each
 * delimiter class is searched once per chunk stretch rather than per character, and whole lines without
 * quotes are cut with one native `split`.
 */
class CsvParser {
  private state: State = STATE.recordStart;
  private fields: string[] = [];
  /** Text of the current field gathered from earlier chunks (or before a doubled quote). */
  private field = '';
  private line = 1;
  private recordLine = 1;
  private quoteLine = 1;
  /** The previous chunk ended with CR: an LF opening this chunk completes a CRLF and is not a new line. */
  private prevEndedCR = false;

  // Kept whole: one resumable state machine whose scan position, state, line counters and four cached
  // delimiter positions live in locals shared by every state branch. The CSV parse is the build's hot
  // path; per-state methods would read and write all of them through `this` on every transition.
  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a single state machine over locals shared by every state (see above)
  push(text: string, out: CsvRecord[]): void {
    const n = text.length;
    if (n === 0) return;
    let state = this.state;
    let fields = this.fields;
    let field = this.field;
    let line = this.line;
    let recordLine = this.recordLine;
    let i = 0;
    // Next index of each delimiter at or after the scan position, n when none; -1 forces the first search.
    let nLF = -1;
    let nCR = -1;
    let nComma = -1;
    let nQuote = -1;

    while (i < n) {
      // Each branch either continues scanning or sets `end` to the newline that closes the record.
      let end: number;
      if (state === STATE.recordStart) {
        const c = text.charCodeAt(i);
        if (c === LF) {
          // A newline (ending a record or a blank line) is a physical line unless it is the LF of a CRLF.
          if (i > 0 ? text.charCodeAt(i - 1) !== CR : !this.prevEndedCR) line++;
          i++;
          continue;
        }
        if (c === CR) {
          line++;
          i++;
          if (i < n && text.charCodeAt(i) === LF) i++;
          continue;
        }
        recordLine = line;
        if (nLF < i) nLF = indexOr(text, '\n', i, n);
        if (nCR < i) nCR = indexOr(text, '\r', i, n);
        const eol = Math.min(nLF, nCR);
        if (nQuote < i) nQuote = indexOr(text, '"', i, n);
        let split: string[] | null = null;
        if (eol < n) {
          // Fast paths: one native split per line; most CMS lines quote a few fields, which are re-joined.
          split = text.slice(i, eol).split(',');
          if (nQuote < eol) split = joinQuoted(split);
        }
        if (split === null) {
          fields = [];
          state = STATE.fieldStart;
          continue;
        }
        fields = split;
        end = eol;
      } else if (state === STATE.fieldStart) {
        field = '';
        if (text.charCodeAt(i) === QUOTE) {
          state = STATE.quoted;
          this.quoteLine = line;
          i++;
        } else {
          state = STATE.unquoted;
        }
        continue;
      } else if (state === STATE.unquoted) {
        if (nComma < i) nComma = indexOr(text, ',', i, n);
        if (nLF < i) nLF = indexOr(text, '\n', i, n);
        if (nCR < i) nCR = indexOr(text, '\r', i, n);
        let stop = nComma;
        if (nLF < stop) stop = nLF;
        if (nCR < stop) stop = nCR;
        if (stop === n) {
          field += text.slice(i);
          if (field.length > MAX_FIELD_CHARS) throw tooLong('field', recordLine);
          break;
        }
        // A quote inside an unquoted field is kept literally: lenient, and what spreadsheets do.
        fields.push(field === '' ? text.slice(i, stop) : field + text.slice(i, stop));
        field = '';
        if (text.charCodeAt(stop) === COMMA) {
          i = stop + 1;
          state = STATE.fieldStart;
          continue;
        }
        end = stop;
      } else if (state === STATE.quoted) {
        if (nQuote < i) nQuote = indexOr(text, '"', i, n);
        const q = nQuote;
        if (nLF < i) nLF = indexOr(text, '\n', i, n);
        if (nCR < i) nCR = indexOr(text, '\r', i, n);
        if (nLF < q || nCR < q) line += this.countLines(text, i, q);
        if (q === n) {
          field += text.slice(i);
          if (field.length > MAX_FIELD_CHARS) throw tooLong('quoted field', this.quoteLine);
          break;
        }
        field += text.slice(i, q);
        i = q + 1;
        state = STATE.quoteInQuoted;
        continue;
      } else {
        const c = text.charCodeAt(i);
        if (c === QUOTE) {
          field += '"';
          i++;
          state = STATE.quoted;
          continue;
        }
        if (c === COMMA) {
          fields.push(field);
          field = '';
          i++;
          state = STATE.fieldStart;
          continue;
        }
        if (c !== LF && c !== CR) {
          // Text after a closing quote (`"a" ,`) joins the field rather than failing a whole build over one
          // stray space; the value parsers trim and judge it.
          state = STATE.unquoted;
          continue;
        }
        fields.push(field);
        field = '';
        end = i;
      }

      out.push({ fields, line: recordLine });
      fields = [];
      state = STATE.recordStart;
      // The record's newline is consumed and counted like that of a blank line.
      i = end;
    }

    this.state = state;
    this.fields = fields;
    this.field = field;
    this.line = line;
    this.recordLine = recordLine;
    this.prevEndedCR = text.charCodeAt(n - 1) === CR;
  }

  /** Ends the input: emits a last record that had no final newline. */
  finish(out: CsvRecord[]): void {
    switch (this.state) {
      case STATE.recordStart:
        return;
      case STATE.quoted:
        throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `unterminated quoted field starting at line ${this.quoteLine}`);
      case STATE.fieldStart:
        // The record ended with a comma: its last field is empty.
        this.fields.push('');
        break;
      default:
        this.fields.push(this.field);
    }
    out.push({ fields: this.fields, line: this.recordLine });
    this.fields = [];
    this.field = '';
    this.state = STATE.recordStart;
  }

  /** Physical lines ended within text[from, to) of a quoted field. */
  private countLines(text: string, from: number, to: number): number {
    let count = 0;
    for (let j = from; j < to; j++) {
      const c = text.charCodeAt(j);
      if (c === CR) count++;
      else if (c === LF && (j > 0 ? text.charCodeAt(j - 1) !== CR : !this.prevEndedCR)) count++;
    }
    return count;
  }
}

/**
 * Re-joins the comma-split parts of one physical line into fields, undoing the quoting. Returns null when the
 * line needs the state machine: a quoted field that runs past the line end, or text after a closing quote.
 * A quote inside an unquoted field stays literal, as in the state machine.
 */
function joinQuoted(parts: string[]): string[] | null {
  const out: string[] = [];
  const count = parts.length;
  for (let k = 0; k < count; k++) {
    let part = parts[k]!;
    if (part.charCodeAt(0) !== QUOTE) {
      out.push(part);
      continue;
    }
    let escaped = false;
    let from = 1;
    for (;;) {
      const q = part.indexOf('"', from);
      if (q < 0) {
        // The comma was inside the quotes: the field goes on in the next part.
        if (++k === count) return null;
        part = `${part},${parts[k]!}`;
        continue;
      }
      if (q + 1 === part.length) break;
      if (part.charCodeAt(q + 1) !== QUOTE) return null;
      escaped = true;
      from = q + 2;
    }
    const content = part.slice(1, -1);
    out.push(escaped ? content.replaceAll('""', '"') : content);
  }
  return out;
}

function tooLong(what: string, line: number): FatalBuildError {
  return new FatalBuildError(
    DIAGNOSTIC_CODES.badFormat,
    `${what} starting at line ${line} is longer than ${MAX_FIELD_CHARS} characters (unterminated quote, or not a CSV file?)`,
  );
}

function indexOr(text: string, needle: string, from: number, none: number): number {
  const at = text.indexOf(needle, from);
  return at < 0 ? none : at;
}

/**
 * Parses CSV from byte or string chunks (a file stream, an inflating zip stream, generated text).
 * Yields one batch per input chunk that completed at least one record (a chunk over 128 Ki characters gives one
 * batch per 128 Ki piece); blank lines are skipped but counted.
 * A leading UTF-8 BOM is dropped. An input should be all bytes or all strings: bytes are decoded as
 * streaming UTF-8, so a character split between chunks is reassembled.
 * @throws FatalBuildError (badFormat) when a quoted field is still open at the end of the input, or a field
 *   grows past 16 Mi characters.
 * @example
 * for await (const batch of csvRecords(fs.createReadStream('plans.csv'))) {
 *   for (const r of batch) console.log(r.line, r.fields);
 * }
 */
export async function* csvRecords(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<CsvRecord[]> {
  // The default TextDecoder already drops a BOM at the start of the byte stream; string input is checked below.
  const decoder = new TextDecoder('utf-8');
  const parser = new CsvParser();
  let atStart = true;
  for await (const chunk of input) {
    let text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (text.length === 0) continue;
    if (atStart) {
      atStart = false;
      if (text.charCodeAt(0) === BOM) text = text.slice(1);
    }
    // Huge chunks (a generated CSV passed as one string, a 1 MiB read) are cut so that a batch's records die
    // young: a whole megabyte of live fields outlasts the young generation and costs twice the parse time in GC.
    for (let at = 0; at < text.length; at += MAX_BATCH_CHARS) {
      const out: CsvRecord[] = [];
      parser.push(text.length <= MAX_BATCH_CHARS ? text : text.slice(at, at + MAX_BATCH_CHARS), out);
      if (out.length > 0) yield out;
    }
  }
  const out: CsvRecord[] = [];
  const tail = decoder.decode();
  if (tail.length > 0) parser.push(atStart && tail.charCodeAt(0) === BOM ? tail.slice(1) : tail, out);
  parser.finish(out);
  if (out.length > 0) yield out;
}
