/**
 * @module The byte-level writers of the REST front: status line, the headers every response carries,
 * and the body, written in one corked pass (src/http/server.ts describes the front).
 *
 * Header names and fixed values of the hot responses are encoded once: uWS copies bytes as they are but
 * converts every string it is given to UTF-8, on every write.
 */
import type { QuotaDecision } from '../policy/quota.ts';
import { RATE_LIMIT_HEADER } from '../policy/rate-limit-headers.ts';
import type { Tier } from '../policy/tiers.ts';
import type { Coding, Variants } from './compression.ts';
import { ByteWriter } from '../encoding/byte-writer.ts';
import { writeGeneratedRequestId } from './request-id.ts';
import { endWithBody } from './response-writer.ts';
import type { HttpResponse } from './uws.ts';

export const EXPOSED = 'ETag, Link, X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, WWW-Authenticate';
const CACHE = 'private, no-cache';
export const JSON_TYPE = 'application/json';
export const PROBLEM_TYPE = 'application/problem+json';

/** Any response but an operation's 200/304: status, its own headers and a body. */
export interface Reply {
  status: number;
  headers: Array<[string, string]>;
  body: string | Buffer;
}

/** A 200 (or 304) of an operation: written header by header, with no intermediate arrays. */
export interface OkReply {
  readonly response: CachedResponse;
  readonly quota: QuotaDecision;
  readonly notModified: boolean;
  /** The coding of the body sent; null: identity. */
  readonly coding: Coding | null;
}

/** A finished 200 of an operation: everything but the per-caller headers. */
export interface CachedResponse {
  /** The ETag's text as bytes. */
  readonly etag: Buffer;
  /** The Link header's value, as bytes. */
  readonly link: Buffer;
  /** Encoded once: a hit hands uWS bytes, not a string to encode again. */
  readonly body: Buffer;
  /** What the response cache counts for it. */
  readonly bytes: number;
  /** The lowest tier allowed to get it (lowered when a lower tier is allowed the same request). */
  tier: Tier;
  /** Compressed bodies (compression.ts); null: the route has no codings (no `Vary: Accept-Encoding`). */
  readonly variants: Variants | null;
}

export function toBytes(body: string | Buffer): Buffer {
  return typeof body === 'string' ? Buffer.from(body) : body;
}

const STATUS_LINE_OK = '200 OK';
const STATUS_LINE_NOT_MODIFIED = '304 Not Modified';

const STATUS_LINE: Record<number, string> = {
  200: STATUS_LINE_OK,
  304: STATUS_LINE_NOT_MODIFIED,
  400: '400 Bad Request',
  401: '401 Unauthorized',
  402: '402 Payment Required',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  406: '406 Not Acceptable',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

/** Header names and fixed values of every 200, encoded once (see {@link CachedResponse}). */
const B = {
  requestId: Buffer.from('x-request-id'),
  allowOrigin: Buffer.from('access-control-allow-origin'),
  any: Buffer.from('*'),
  exposeHeaders: Buffer.from('access-control-expose-headers'),
  exposed: Buffer.from(EXPOSED),
  connection: Buffer.from('connection'),
  close: Buffer.from('close'),
  ok: Buffer.from(STATUS_LINE_OK),
  notModified: Buffer.from(STATUS_LINE_NOT_MODIFIED),
} as const;

/** Inside a cork: the status line and the headers every response carries. */
function writeHead(res: HttpResponse, status: string | Buffer, requestId: string): void {
  res.writeStatus(status);
  res.writeHeader(B.requestId, requestId);
  res.writeHeader(B.allowOrigin, B.any);
  res.writeHeader(B.exposeHeaders, B.exposed);
}

/**
 * Inside a cork, after the headers: the body, or none for a 304 and for HEAD (its length instead).
 * `close` (draining) asks the client to close the connection after this response. It is only a
 * header: uWS's own close-after-end would buffer the body where a shutdown cannot see whether it was
 * sent, and a connection the client keeps anyway is closed once nothing is being written
 * (src/http/server.ts).
 */
function writeBody(res: HttpResponse, status: number, head: boolean, body: string | Buffer, close: boolean): void {
  if (close) res.writeHeader(B.connection, B.close);
  // endWithoutBody takes no arguments here: an undefined length reaches the native side as 2^63.
  if (status === 304) {
    res.endWithoutBody();
  } else if (head) {
    res.writeHeader('content-length', String(Buffer.byteLength(body)));
    res.endWithoutBody();
  } else {
    endWithBody(res, toBytes(body));
  }
}

/** Writes a {@link Reply}; `close` (draining) adds `Connection: close`. */
export function writeReply(res: HttpResponse, reply: Reply, head: boolean, requestId: string, close: boolean): void {
  res.cork(() => {
    writeHead(res, STATUS_LINE[reply.status] ?? `${reply.status} Unknown`, requestId);
    for (const [k, v] of reply.headers) res.writeHeader(k, v);
    writeBody(res, reply.status, head, reply.body, close);
  });
}

/**
 * uWS's cork buffer (LoopData::CORK_BUFFER_SIZE in uWebSockets 20.x). While uWS parses what a
 * connection sent, every handler it calls writes into this buffer, sent when the whole read is parsed;
 * a write that does not fit sends the buffer and itself at once and leaves the connection uncorked.
 */
const CORK_BUFFER_BYTES = 16 * 1024;

/**
 * Writes a {@link Reply} (not to HEAD) with `Connection: close` and closes the connection before uWS
 * parses another request from it: the last answer on a connection whose framing cannot be trusted.
 *
 * uWS goes on to dispatch the requests pipelined behind this one unless the handler leaves the
 * connection closed, and a connection closed while corked loses what was written into the cork buffer:
 * with `end(body, true)` alone uWS answers the next request too (that request's state drops the
 * close), and `close()` discards the corked answer. A body at least as long as the cork buffer is sent
 * at once, uncorked, so `end` can close the connection itself; the problem is padded with trailing
 * JSON whitespace to that length. Only while the kernel takes the ~16 KiB at once (a fresh connection's
 * send buffer does) is the close immediate; otherwise uWS closes once the rest is sent, and a request
 * pipelined behind is answered meanwhile.
 */
export function writeReplyAndClose(res: HttpResponse, reply: Reply, requestId: string): void {
  const body = toBytes(reply.body);
  const padded = Buffer.alloc(Math.max(body.byteLength, CORK_BUFFER_BYTES), 0x20);
  body.copy(padded);
  res.cork(() => {
    writeHead(res, STATUS_LINE[reply.status] ?? `${reply.status} Unknown`, requestId);
    for (const [k, v] of reply.headers) res.writeHeader(k, v);
    res.end(padded, true);
  });
}

/**
 * The same for HEAD, whose answer has no body to pad: written in a later turn, after uWS has parsed the
 * whole read. The response stays pending meanwhile, so a request pipelined behind this one makes uWS
 * close the connection without calling any handler (no async pipelining, response-writer.ts); then no
 * answer at all is sent, the 400 included.
 *
 * uWS cannot end a HEAD answer and close: `endWithoutBody(length, true)` counts the length as body
 * still to come and leaves the response pending and the connection open, with no timeout. The head is
 * therefore written whole (its blank line after the last field) without ending the response, sent when
 * the cork ends (a cork outside uWS's parser is sent at once), and the connection closed.
 */
export function writeHeadReplyAndCloseLater(res: HttpResponse, reply: Reply, requestId: string): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  setImmediate(() => {
    if (aborted) return;
    res.cork(() => {
      writeHead(res, STATUS_LINE[reply.status] ?? `${reply.status} Unknown`, requestId);
      for (const [k, v] of reply.headers) res.writeHeader(k, v);
      res.writeHeader('content-length', String(Buffer.byteLength(reply.body)));
      res.writeHeader(B.connection, 'close\r\n');
    });
    res.close();
  });
}

/**
 * The fixed text between the per-response values of an operation's 200 (304: without content-type).
 * uWS writes a header as `name: value\r\n` without looking at the value, so the whole block after
 * the status line goes in as the value of one `writeHeader` call: the bytes on the wire are those of
 * twelve calls, and each call it saves crossed into C++ and converted its arguments. The block is
 * written as bytes into one reused buffer (byte-writer.ts), so no string is built for it. Every value
 * put in the block is ours and free of CR/LF: the request id (a safe token or a UUID), the ETag,
 * numbers and the Link header (our base URL and percent-encoded echoes).
 */
const H = {
  afterId200: Buffer.from(
    `\r\naccess-control-allow-origin: *\r\naccess-control-expose-headers: ${EXPOSED}\r\ncontent-type: ${JSON_TYPE}\r\netag: `,
  ),
  afterId304: Buffer.from(`\r\naccess-control-allow-origin: *\r\naccess-control-expose-headers: ${EXPOSED}\r\netag: `),
  contentEncoding: Buffer.from('\r\ncontent-encoding: '),
  afterEtag: Buffer.from(`\r\ncache-control: ${CACHE}\r\nvary: Authorization`),
  afterEtagVariants: Buffer.from(`\r\ncache-control: ${CACHE}\r\nvary: Authorization, Accept-Encoding`),
  link: Buffer.from('\r\nlink: '),
  limit: Buffer.from(`\r\n${RATE_LIMIT_HEADER.limit}: `),
  remaining: Buffer.from(`\r\n${RATE_LIMIT_HEADER.remaining}: `),
  reset: Buffer.from(`\r\n${RATE_LIMIT_HEADER.reset}: `),
  retryAfter: Buffer.from(`\r\n${RATE_LIMIT_HEADER.retryAfter}: `),
} as const;

/** The header block of every 200 and 304 of this thread, rewritten for each. */
const HEAD = new ByteWriter(1 << 12);

/**
 * The rate-limit headers of rate-limit-headers.ts (its names, order and values), written as bytes: the
 * remaining count changes on every response, and its text was a string per response.
 */
function headRateLimit(d: QuotaDecision): void {
  HEAD.bytes(H.limit);
  HEAD.number(d.limit);
  HEAD.bytes(H.remaining);
  HEAD.number(d.remaining);
  HEAD.bytes(H.reset);
  HEAD.number(d.resetEpochSeconds);
  if (d.allowed) return;
  HEAD.bytes(H.retryAfter);
  HEAD.number(d.retryAfterSeconds);
}

/** The headers of an operation's 200 or 304 after `x-request-id: `, as one value (a view of {@link HEAD}). */
function okHeaderBlock(ok: OkReply, requestId: string | null): Buffer {
  HEAD.reset();
  if (requestId === null) writeGeneratedRequestId(HEAD);
  else HEAD.latin1(requestId);
  HEAD.bytes(ok.notModified ? H.afterId304 : H.afterId200);
  HEAD.bytes(ok.response.etag);
  if (ok.coding !== null) {
    HEAD.bytes(H.contentEncoding);
    HEAD.latin1(ok.coding);
  }
  HEAD.bytes(ok.response.variants === null ? H.afterEtag : H.afterEtagVariants);
  headRateLimit(ok.quota);
  HEAD.bytes(H.link);
  HEAD.bytes(ok.response.link);
  return HEAD.exactView();
}

/** What {@link writeOk} writes, for the corked function (a closure per response was garbage). */
const OK_WRITE = {
  res: undefined as unknown as HttpResponse,
  ok: undefined as unknown as OkReply,
  head: false,
  requestId: null as string | null,
  close: false,
};

function writeOkCorked(): void {
  const { res, ok, head, requestId, close } = OK_WRITE;
  res.writeStatus(ok.notModified ? B.notModified : B.ok);
  res.writeHeader(B.requestId, okHeaderBlock(ok, requestId));
  writeBody(res, ok.notModified ? 304 : 200, head, bodyOf(ok), close);
}

/**
 * Writes an operation's 200 or 304: the status line, one header block, the body. `requestId` null:
 * the thread's generated id (request-id.ts). `inHandler`: written in the uWS handler's own turn, which
 * uWS runs corked; a cork there would only cost a call into uWS and one back into JS.
 */
export function writeOk(res: HttpResponse, ok: OkReply, head: boolean, requestId: string | null, close: boolean, inHandler = false): void {
  const w = OK_WRITE;
  w.res = res;
  w.ok = ok;
  w.head = head;
  w.requestId = requestId;
  w.close = close;
  try {
    if (inHandler) writeOkCorked();
    else res.cork(writeOkCorked);
  } finally {
    w.res = undefined as unknown as HttpResponse;
    w.ok = undefined as unknown as OkReply;
  }
}

/** The bytes of the coding chosen (chooseCoding only picks codings the response has). */
function bodyOf(ok: OkReply): Buffer {
  const encoded = ok.coding === null ? undefined : ok.response.variants?.[ok.coding];
  return encoded ?? ok.response.body;
}

/** The 204 of a CORS preflight. */
export function writePreflight(res: HttpResponse, requestId: string): void {
  res.cork(() => {
    res.writeStatus('204 No Content');
    res.writeHeader('x-request-id', requestId);
    res.writeHeader('access-control-allow-origin', '*');
    res.writeHeader('access-control-allow-methods', 'GET, HEAD, OPTIONS');
    res.writeHeader('access-control-allow-headers', 'Authorization, Accept, If-None-Match, Content-Type, X-Request-Id');
    res.writeHeader('access-control-expose-headers', EXPOSED);
    res.writeHeader('access-control-max-age', '86400');
    res.endWithoutBody();
  });
}
