/**
 * @module An optional cell of a CMS row: empty is null, and an unparsable value is nulled with a warning
 * naming its file, line and column, so one bad cell never drops a plan the rest of its row describes.
 */
import type { DiagnosticSink } from './diagnostics.ts';
import type { Row } from './table-rows.ts';
import type { ParseResult } from './values.ts';

/** A reader of one kind of optional cell of `row`: call it with a column name. */
export function optionalCell<T>(row: Row, sink: DiagnosticSink, parse: (raw: string) => ParseResult<T>): (column: string) => T | null {
  return (column) => {
    const raw = row.get(column);
    if (raw === '') return null;
    const r = parse(raw);
    if (r.ok) return r.value;
    sink.warn({ ...row.at(column, raw), reason: `${r.reason}; stored as null` });
    return null;
  };
}
