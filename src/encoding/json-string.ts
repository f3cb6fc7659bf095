/**
 * @module A string as a JSON string literal, exactly as JSON.stringify writes it.
 *
 * Request-path texts (canonical requests, cursors) quote a few short values each; JSON.stringify on a
 * string is a call into the runtime that costs more than the quoting when nothing needs escaping.
 */

/** Characters JSON.stringify escapes: quote, backslash, controls, and (lone) surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point (they must be escaped)
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

export function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** Whether {@link jsonString} would escape anything in `s` (else it only adds the quotes). */
export function needsEscape(s: string): boolean {
  return NEEDS_ESCAPE.test(s);
}
