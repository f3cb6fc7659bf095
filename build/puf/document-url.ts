/** @module The URL columns of the Plans PUFs (brochure, SBC, formulary), read the one way for medical and dental rows. */
import type { Row } from '../read/table-rows.ts';

/** Keeps http(s) URLs only: the PUF has free text such as "N/A" in URL columns. */
export function documentUrl(row: Row, column: string): string | null {
  const v = row.get(column);
  if (v === '') return null;
  const withScheme = /^https?:\/\//i.test(v) ? v : /^www\./i.test(v) ? `https://${v}` : null;
  if (withScheme === null) return null;
  try {
    return new URL(withScheme).href;
  } catch {
    return null;
  }
}
