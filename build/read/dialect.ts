/**
 * @module Column dialects: a file whose columns carry other names (and some values other spellings)
 * read as the federal PUF the loaders know.
 *
 * CMS publishes the state-based-exchange PUFs with upper-case headers that are not mechanical
 * re-spellings of the federal names (`EHB PERCENT PREMIUM` for `EHBPercentTotalPremium`, typos such as
 * `COINSURNACE`), and a few values spelled differently (`true` for `Yes`, `02-12-2024` for a date). A
 * dialect declares, per federal column, the column of the file it reads and how its value is
 * normalised; the view it gives is an ordinary {@link TableReader}, so the loaders, their checks and
 * their diagnostics are the federal ones. Diagnostics still point at the file's own line and column
 * (`sourceColumn`), and a missing column is reported under the name the file should have had.
 */
import type { CsvRecord } from './csv-reader.ts';
import { DIAGNOSTIC_CODES, FatalBuildError } from './diagnostics.ts';
import type { TableReader } from './table.ts';

/** Reads another cell of the same record, by its name in the file. */
export type CellOf = (fileColumn: string) => string;

export interface DialectColumn {
  /** Header of the column in the file, exactly as published (typos and double spaces included). */
  readonly from: string;
  /** Rewrites the file's spelling of a value into the federal one; absent: the value as it is. */
  readonly value?: (raw: string, cell: CellOf) => string;
}

export interface ColumnDialect {
  /** Name used in messages, e.g. `CMS SBE Plans PUF`. */
  readonly name: string;
  /** Federal column name → where the file has it. */
  readonly columns: Readonly<Record<string, DialectColumn>>;
}

/** The federal view of a table written in `dialect`. Columns the dialect does not declare are not visible. */
export function withDialect(table: TableReader, dialect: ColumnDialect): TableReader {
  const names = Object.keys(dialect.columns);
  const fileIndex = names.map((n) => table.column(dialect.columns[n]!.from));
  const present = names.filter((_, i) => fileIndex[i]! >= 0);
  const sourceOf = present.map((n) => fileIndex[names.indexOf(n)]!);
  const normalisers = present.map((n) => dialect.columns[n]!.value);
  const position = new Map(present.map((n, i) => [n, i]));
  const folded = new Map(present.map((n, i) => [n.toLowerCase(), i]));
  const column = (name: string): number => position.get(name) ?? folded.get(name.trim().toLowerCase()) ?? -1;

  const translate = (rec: CsvRecord): CsvRecord => {
    const cell: CellOf = (from) => {
      const i = table.column(from);
      return i < 0 ? '' : (rec.fields[i] ?? '').trim();
    };
    const fields = sourceOf.map((src, i) => {
      const raw = rec.fields[src] ?? '';
      const normalise = normalisers[i];
      return normalise === undefined ? raw : normalise(raw.trim(), cell);
    });
    return { fields, line: rec.line };
  };

  return {
    file: table.file,
    header: present,
    column,
    require(required: readonly string[]): void {
      const missing = required.filter((n) => column(n) < 0);
      if (missing.length === 0) return;
      const spelled = missing.map((n) => {
        const from = dialect.columns[n]?.from;
        return from === undefined ? `${n} (not in the ${dialect.name} dialect)` : `${from} (${n})`;
      });
      const reason = `missing required column(s) ${spelled.join(', ')} of the ${dialect.name}`;
      throw new FatalBuildError(DIAGNOSTIC_CODES.missingColumn, `${table.file}:1: ${reason}`, {
        severity: 'error',
        code: DIAGNOSTIC_CODES.missingColumn,
        file: table.file,
        line: 1,
        column: 0,
        reason,
      });
    },
    async *rows(): AsyncGenerator<CsvRecord[]> {
      for await (const batch of table.rows()) yield batch.map(translate);
    },
    progress: () => table.progress(),
    close: () => table.close(),
    sourceColumn: (index) => sourceOf[index] ?? index,
  };
}
