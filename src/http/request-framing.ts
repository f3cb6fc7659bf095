/**
 * @module Whether a request's framing fields leave its end in doubt (RFC 9112 §6.3, RFC 9110 §7.2). Two
 * parsers that read one such request differently — uWS frames by the first `Content-Length` while a
 * proxy may take the last, uWS takes any `Transfer-Encoding` for chunked — disagree on where the next
 * request starts, which is how a request is smuggled past a front proxy. Every listener answers such
 * a request with a 400 and closes the connection without reading another request from it; this module
 * only judges, the fronts (rest-front.ts, node-listener.ts) answer.
 */

/** The framing fields of one request, every occurrence in order (what `getHeader` hides past the first). */
export interface FramingFields {
  readonly method: string;
  readonly transferEncoding: readonly string[];
  readonly contentLength: readonly string[];
  readonly hosts: number;
}

/** Why a request is refused: `body` for a GET or HEAD that announces a body, `framing` otherwise. */
export interface FramingFault {
  readonly kind: 'body' | 'framing';
  /** One sentence naming the field, for the problem's detail. */
  readonly reason: string;
}

const DIGITS = /^[0-9]+$/;

/**
 * The fault of a request's framing, or null when it is unambiguous: one `Host`, at most one
 * `Content-Length` of digits, `Transfer-Encoding` only as a single `chunked` and never with a
 * `Content-Length`, and no body at all on GET and HEAD.
 *
 * @example framingFault({ method: 'POST', transferEncoding: ['chunked', 'identity'], contentLength: [], hosts: 1 })?.kind === 'framing'
 */
export function framingFault(f: FramingFields): FramingFault | null {
  if (f.hosts > 1) return { kind: 'framing', reason: 'The request has more than one Host field.' };
  const te = f.transferEncoding;
  const cl = f.contentLength;
  if (te.length > 0 && cl.length > 0) return { kind: 'framing', reason: 'The request has both Transfer-Encoding and Content-Length.' };
  if (cl.length > 1) return { kind: 'framing', reason: 'The request has more than one Content-Length field.' };
  if (cl.length === 1 && !DIGITS.test(cl[0]!)) return { kind: 'framing', reason: 'The Content-Length is not a number.' };
  const bodiless = f.method === 'GET' || f.method === 'HEAD';
  // A GET's body is refused before its coding is judged: it says what to change.
  if (bodiless && (te.length > 0 || (cl.length === 1 && Number(cl[0]) !== 0))) return { kind: 'body', reason: '' };
  if (te.length > 1) return { kind: 'framing', reason: 'The request has more than one Transfer-Encoding field.' };
  if (te.length === 1 && te[0]!.trim().toLowerCase() !== 'chunked')
    return { kind: 'framing', reason: 'The Transfer-Encoding is not a single chunked (no other transfer coding is accepted).' };
  return null;
}
