/**
 * @module Structured diagnostics of the data compiler.
 *
 * Every problem found in an input is reported with the file, the physical line, the 1-based column,
 * the offending value and a reason, so an operator can open the file and fix it. Rejected rows are
 * counted per file because more than 1 % rejected rows fails a build: a file that bad is more likely
 * the wrong file than a few bad rows.
 */

export interface Diagnostic {
  readonly severity: 'error' | 'warning';
  /** Stable code from {@link DIAGNOSTIC_CODES}. */
  readonly code: DiagnosticCode;
  readonly file: string;
  /** 1-based physical line on which the record starts (the header is line 1); 0 when not tied to a line. */
  readonly line: number;
  /** 1-based column of the field; 0 when not tied to a column. */
  readonly column: number;
  readonly columnName?: string;
  readonly value?: string;
  readonly reason: string;
}

/** Stable diagnostic codes: tools and tests match on these, never on the wording. */
export const DIAGNOSTIC_CODES = {
  missingColumn: 'HPD_BUILD_MISSING_COLUMN',
  badValue: 'HPD_BUILD_BAD_VALUE',
  nullValue: 'HPD_BUILD_NULLED_VALUE',
  rowRejected: 'HPD_BUILD_ROW_REJECTED',
  tooManyRejected: 'HPD_BUILD_TOO_MANY_REJECTED',
  badFormat: 'HPD_BUILD_BAD_FORMAT',
  inputMissing: 'HPD_BUILD_INPUT_MISSING',
  checksum: 'HPD_BUILD_CHECKSUM_MISMATCH',
  geography: 'HPD_BUILD_GEOGRAPHY',
  model: 'HPD_BUILD_MODEL',
  verify: 'HPD_BUILD_VERIFY_FAILED',
  interrupted: 'HPD_BUILD_INTERRUPTED',
  writeFailed: 'HPD_BUILD_WRITE_FAILED',
  sourceClash: 'HPD_BUILD_SOURCE_CLASH',
} as const;
export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[keyof typeof DIAGNOSTIC_CODES];

/** A problem that stops the build. Its message is the one line the CLI prints. */
export class FatalBuildError extends Error {
  readonly code: DiagnosticCode;
  readonly diagnostic?: Diagnostic;
  constructor(code: DiagnosticCode, message: string, diagnostic?: Diagnostic) {
    super(message);
    this.name = 'FatalBuildError';
    this.code = code;
    this.diagnostic = diagnostic;
  }
}

/** Formats a diagnostic as `file:line:column: reason (column Name, value "x")`, the shape editors link. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.line > 0 ? `${d.file}:${d.line}${d.column > 0 ? `:${d.column}` : ''}` : d.file;
  const extra: string[] = [];
  if (d.columnName !== undefined) extra.push(`column ${d.columnName}`);
  if (d.value !== undefined) extra.push(`value ${JSON.stringify(d.value.length > 80 ? `${d.value.slice(0, 77)}...` : d.value)}`);
  return `${where}: ${d.reason}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
}

export interface FileCounts {
  rowsRead: number;
  rowsRejected: number;
  /** Rows read but outside the build's scope (dental, SHOP, other states...): not an error. */
  rowsIgnored: number;
}

/** Rejected rows above this share of a file's rows fail the build. */
export const MAX_REJECTED_SHARE = 0.01;
/** Diagnostics kept verbatim per file and code; the rest are only counted, so a bad file cannot exhaust memory. */
const KEEP_PER_KIND = 50;

/**
 * Collects diagnostics and per-file counts for one build.
 * @example
 * const sink = new DiagnosticSink();
 * sink.rowRead('plans.csv');
 * sink.reject({ file: 'plans.csv', line: 7, column: 3, columnName: 'PlanId', value: 'x', reason: 'not a plan variant id' });
 */
export class DiagnosticSink {
  readonly kept: Diagnostic[] = [];
  readonly files = new Map<string, FileCounts>();
  private readonly perKind = new Map<string, number>();
  warningCount = 0;
  errorCount = 0;

  counts(file: string): FileCounts {
    let c = this.files.get(file);
    if (c === undefined) {
      c = { rowsRead: 0, rowsRejected: 0, rowsIgnored: 0 };
      this.files.set(file, c);
    }
    return c;
  }

  rowRead(file: string, n = 1): void {
    this.counts(file).rowsRead += n;
  }

  rowIgnored(file: string, n = 1): void {
    this.counts(file).rowsIgnored += n;
  }

  /** The row is dropped; the build goes on unless too many rows of the file are dropped. */
  reject(d: Omit<Diagnostic, 'severity' | 'code'> & { code?: DiagnosticCode }): void {
    this.counts(d.file).rowsRejected += 1;
    this.errorCount += 1;
    this.keep({ ...d, severity: 'error', code: d.code ?? DIAGNOSTIC_CODES.rowRejected });
  }

  warn(d: Omit<Diagnostic, 'severity' | 'code'> & { code?: DiagnosticCode }): void {
    this.warningCount += 1;
    this.keep({ ...d, severity: 'warning', code: d.code ?? DIAGNOSTIC_CODES.nullValue });
  }

  /** Throws when a file rejected more than {@link MAX_REJECTED_SHARE} of its rows. */
  checkRejectedShare(file: string): void {
    const c = this.counts(file);
    if (c.rowsRead > 0 && c.rowsRejected / c.rowsRead > MAX_REJECTED_SHARE) {
      const pct = ((100 * c.rowsRejected) / c.rowsRead).toFixed(2);
      const first = this.kept.find((d) => d.file === file && d.severity === 'error');
      throw new FatalBuildError(
        DIAGNOSTIC_CODES.tooManyRejected,
        `${file}: ${c.rowsRejected} of ${c.rowsRead} rows rejected (${pct} %, limit 1 %)` +
          (first !== undefined ? `; first: ${formatDiagnostic(first)}` : ''),
      );
    }
  }

  private keep(d: Diagnostic): void {
    const kind = `${d.file}\u0000${d.code}\u0000${d.columnName ?? ''}`;
    const n = (this.perKind.get(kind) ?? 0) + 1;
    this.perKind.set(kind, n);
    if (n <= KEEP_PER_KIND) this.kept.push(d);
  }

  /** Counts of diagnostics that were not kept verbatim, by file/code/column. */
  truncated(): Array<{ file: string; code: string; column: string; dropped: number }> {
    const out: Array<{ file: string; code: string; column: string; dropped: number }> = [];
    for (const [kind, n] of this.perKind) {
      if (n > KEEP_PER_KIND) {
        const [file, code, column] = kind.split('\u0000');
        out.push({ file: file!, code: code!, column: column!, dropped: n - KEEP_PER_KIND });
      }
    }
    return out;
  }
}
