/**
 * @module Row iteration over a header-keyed table with per-file counting and progress.
 *
 * Loaders declare the columns they need once; this helper resolves them to indexes, trims values
 * (PY2023 files carry trailing spaces in 39 columns) and counts rows, so each loader is only its
 * row rule.
 */
import type { ProgressSink } from '../progress.ts';
import type { DiagnosticSink } from './diagnostics.ts';
import type { TableReader } from './table.ts';

const YIELD_EVERY_MS = 50;

/** Access to one record's fields by column name; missing optional columns read as ''. */
export interface Row {
  readonly line: number;
  get(column: string): string;
  /** 1-based column number of a column (0 when the file does not have it), for diagnostics. */
  col(column: string): number;
  /** Where a diagnostic about `column` of this record points, with the cell's value unless another is given. */
  at(column: string, value?: string): CellRef;
}

export interface CellRef {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly columnName: string;
  readonly value: string;
}

/**
 * Calls `onRow` for every data record. Required columns must exist (fatal otherwise); optional ones
 * that are missing are reported once as a warning and read as empty.
 */
export async function forEachRow(
  table: TableReader,
  spec: { required: readonly string[]; optional?: readonly string[]; stage: string },
  sink: DiagnosticSink,
  progress: ProgressSink,
  onRow: (row: Row) => void,
): Promise<number> {
  table.require(spec.required);
  const index = new Map<string, number>();
  for (const name of [...spec.required, ...(spec.optional ?? [])]) {
    const i = table.column(name);
    if (i < 0) {
      sink.warn({ file: table.file, line: 1, column: 0, columnName: name, reason: 'optional column missing; its values are null' });
    }
    index.set(name, i);
  }
  let fields: string[] = [];
  let line = 0;
  const row: Row = {
    get line() {
      return line;
    },
    get(column) {
      const i = index.get(column);
      if (i === undefined || i < 0) return '';
      const v = fields[i];
      return v === undefined ? '' : v.trim();
    },
    col(column) {
      const i = index.get(column) ?? table.column(column);
      if (i === undefined || i < 0) return 0;
      // A dialect view points diagnostics at the column of the file the operator will open.
      return (table.sourceColumn?.(i) ?? i) + 1;
    },
    at(column, value) {
      return { file: table.file, line, column: row.col(column), columnName: column, value: value ?? row.get(column) };
    },
  };
  const stage = progress.stage(spec.stage);
  let n = 0;
  let lastYield = performance.now();
  for await (const batch of table.rows()) {
    // Batches of an in-memory source arrive as microtasks only; give signal handlers (SIGINT) and
    // timers a turn now and then, or Ctrl-C would wait for the whole stage.
    if (performance.now() - lastYield > YIELD_EVERY_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      lastYield = performance.now();
    }
    for (const rec of batch) {
      fields = rec.fields;
      line = rec.line;
      n += 1;
      onRow(row);
    }
    const p = table.progress();
    stage.update(n, p.bytesRead, p.bytesTotal);
  }
  sink.rowRead(table.file, n);
  stage.end(n);
  return n;
}
