/**
 * @module Header-keyed access to one input table (CSV file, CSV inside a CMS zip, or generated CSV text).
 *
 * Loaders address columns by header name, never by position: CMS reorders and adds columns between plan years,
 * and a loader that trusted positions would read the wrong column without any error. Header names are trimmed
 * and matched exactly first, then case-insensitively, because hand-edited and older files vary in case.
 * Every required column is checked up front and all missing ones are reported in one message, so an operator
 * fixes a wrong file in one round trip.
 */
import fs from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { csvRecords } from './csv-reader.ts';
import type { CsvRecord } from './csv-reader.ts';
import { DIAGNOSTIC_CODES, FatalBuildError } from './diagnostics.ts';
import { openZipCsv } from './zip-entry.ts';
import { InvariantError } from '../../src/invariant.ts';

export interface TableReader {
  /** Name used in diagnostics (the file's base name unless the caller chose one). */
  readonly file: string;
  /** Header names, trimmed and BOM-free, in file order. */
  readonly header: readonly string[];
  /** Index of a column: exact name first, then case-insensitive; -1 when absent. */
  column(name: string): number;
  /**
   * Checks that all the named columns exist.
   * @throws FatalBuildError (missingColumn) listing every missing column:
   *   `plans.csv:1: missing required column(s) PlanId, StateCode`
   */
  require(names: readonly string[]): void;
  /** Data records after the header, in batches. Can be iterated once. */
  rows(): AsyncGenerator<CsvRecord[]>;
  /** Bytes consumed so far (inflated bytes for a zip) and the total when known, for progress reporting. */
  progress(): { bytesRead: number; bytesTotal: number | null };
  /** Releases the underlying file when the rows are not read to the end. */
  close(): Promise<void>;
  /**
   * 0-based column of the input file that column `index` of this table reads, when the table is a view
   * of a file in another column dialect (see dialect.ts); absent: the same index.
   */
  sourceColumn?(index: number): number;
}

/** Read size of plain files: large reads save syscalls, and csvRecords keeps batches small regardless. */
const FILE_CHUNK = 1 << 16;

/**
 * Opens a CSV file, or the single CSV member of a `.zip`, and reads its header.
 * @param displayName name used in diagnostics; defaults to the file's base name.
 * @param member in a zip of several CSVs, the pattern naming the one to read.
 * @throws FatalBuildError inputMissing when the file does not exist; badFormat when it is empty or not a usable zip.
 * @example
 * const t = await openTable('cms/py2025/plan-attributes-puf.zip', 'plan-attributes-puf');
 * t.require(['PlanId', 'StateCode']);
 * const planId = t.column('PlanId');
 * for await (const batch of t.rows()) for (const r of batch) use(r.fields[planId], r.line);
 */
export async function openTable(filePath: string, displayName?: string, member?: RegExp): Promise<TableReader> {
  const name = displayName ?? path.basename(filePath);
  let size: number;
  try {
    size = (await stat(filePath)).size;
  } catch (err) {
    if (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ENOENT') {
      throw new FatalBuildError(DIAGNOSTIC_CODES.inputMissing, `${name}: file not found (${filePath})`);
    }
    throw err;
  }
  if (filePath.toLowerCase().endsWith('.zip')) {
    const zip = await openZipCsv(filePath, member);
    return openTableFromStream(zip.stream, name, zip.uncompressedSize);
  }
  return openTableFromStream(fs.createReadStream(filePath, { highWaterMark: FILE_CHUNK }), name, size);
}

/**
 * Reads a table from any chunk source, e.g. CSV generated in memory, through the same parser and checks.
 * @param bytesTotal expected total, for progress; bytes read are counted as UTF-8 for string chunks.
 * @throws FatalBuildError (badFormat) when the input holds no header record.
 */
export async function openTableFromStream(
  input: AsyncIterable<Uint8Array | string>,
  displayName: string,
  bytesTotal?: number,
): Promise<TableReader> {
  let bytesRead = 0;
  // Errors of the source (a zip's CRC check, a read failure) already name the file; only parser errors need it.
  let sourceError: unknown;
  async function* counted(): AsyncGenerator<Uint8Array | string> {
    try {
      for await (const chunk of input) {
        bytesRead += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
        yield chunk;
      }
    } catch (err) {
      sourceError = err;
      throw err;
    }
  }
  const withFile = (err: unknown): unknown => {
    if (err === sourceError || !(err instanceof FatalBuildError)) return err;
    return new FatalBuildError(err.code, `${displayName}: ${err.message}`, err.diagnostic);
  };
  const batches = csvRecords(counted());

  let first: CsvRecord[] = [];
  let headerRecord: CsvRecord | undefined;
  try {
    while (headerRecord === undefined) {
      const next = await batches.next();
      if (next.done === true) break;
      if (next.value.length > 0) {
        headerRecord = next.value[0];
        first = next.value.slice(1);
      }
    }
  } catch (err) {
    throw withFile(err);
  }
  if (headerRecord === undefined) {
    throw new FatalBuildError(DIAGNOSTIC_CODES.badFormat, `${displayName}: empty file (no header line)`);
  }

  const header = headerRecord.fields.map((h) => h.replace(/^\uFEFF/, '').trim());
  const exact = new Map<string, number>();
  const folded = new Map<string, number>();
  // The first of duplicate names wins, as a reader scanning the header left to right would expect.
  header.forEach((h, i) => {
    if (!exact.has(h)) exact.set(h, i);
    const f = h.toLowerCase();
    if (!folded.has(f)) folded.set(f, i);
  });

  let started = false;
  const column = (name: string): number => exact.get(name) ?? folded.get(name.trim().toLowerCase()) ?? -1;

  return {
    file: displayName,
    header,
    column,
    require(names: readonly string[]): void {
      const missing = names.filter((n) => column(n) < 0);
      if (missing.length === 0) return;
      const reason = `missing required column(s) ${missing.join(', ')}`;
      throw new FatalBuildError(DIAGNOSTIC_CODES.missingColumn, `${displayName}:1: ${reason}`, {
        severity: 'error',
        code: DIAGNOSTIC_CODES.missingColumn,
        file: displayName,
        line: 1,
        column: 0,
        reason,
      });
    },
    async *rows(): AsyncGenerator<CsvRecord[]> {
      if (started) throw new InvariantError(`${displayName}: rows() can be iterated only once`);
      started = true;
      if (first.length > 0) {
        const batch = first;
        first = [];
        yield batch;
      }
      try {
        for await (const batch of batches) yield batch;
      } catch (err) {
        throw withFile(err);
      }
    },
    progress() {
      return { bytesRead, bytesTotal: bytesTotal ?? null };
    },
    async close(): Promise<void> {
      await batches.return(undefined);
    },
  };
}
