/**
 * @module The request-framing cases every listener must refuse (RFC 9112 §6.3, §2.2, §3.2; RFC 9110
 * §7.2): each is one malformed request followed, in the same write, by a valid one that must never be
 * answered. Used by test/adversarial/framing.test.ts against all four listeners.
 */

export interface FramingCase {
  readonly name: string;
  /** The malformed request: `path` is the listener's probe path. */
  readonly request: (path: string) => string;
  /** HEAD: the answer has no body. */
  readonly head?: boolean;
}

const H = 'Host: x\r\n';
const CHUNKED_HELLO = '5\r\nhello\r\n0\r\n\r\n';

export const FRAMING_CASES: readonly FramingCase[] = [
  {
    name: 'two Content-Length fields that differ',
    request: (p) => `POST ${p} HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello`,
  },
  {
    name: 'two equal Content-Length fields',
    request: (p) => `POST ${p} HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello`,
  },
  { name: 'a Content-Length list', request: (p) => `POST ${p} HTTP/1.1\r\n${H}Content-Length: 5, 5\r\n\r\nhello` },
  {
    name: 'Transfer-Encoding chunked then identity (two fields)',
    request: (p) => `POST ${p} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n${CHUNKED_HELLO}`,
  },
  {
    name: 'Transfer-Encoding chunked twice (two fields)',
    request: (p) => `POST ${p} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n${CHUNKED_HELLO}`,
  },
  {
    name: 'Transfer-Encoding: chunked, identity',
    request: (p) => `POST ${p} HTTP/1.1\r\n${H}Transfer-Encoding: chunked, identity\r\n\r\n${CHUNKED_HELLO}`,
  },
  { name: 'Transfer-Encoding: identity', request: (p) => `POST ${p} HTTP/1.1\r\n${H}Transfer-Encoding: identity\r\n\r\n${CHUNKED_HELLO}` },
  {
    name: 'Transfer-Encoding: gzip, chunked',
    request: (p) => `POST ${p} HTTP/1.1\r\n${H}Transfer-Encoding: gzip, chunked\r\n\r\n${CHUNKED_HELLO}`,
  },
  { name: 'Transfer-Encoding: xchunked', request: (p) => `POST ${p} HTTP/1.1\r\n${H}Transfer-Encoding: xchunked\r\n\r\n${CHUNKED_HELLO}` },
  {
    name: 'Transfer-Encoding with Content-Length',
    request: (p) => `POST ${p} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n${CHUNKED_HELLO}`,
  },
  { name: 'a bare CR inside a header value', request: (p) => `GET ${p} HTTP/1.1\r\n${H}X-A: a\rb\r\n\r\n` },
  { name: 'a bare LF inside a header value', request: (p) => `GET ${p} HTTP/1.1\r\n${H}X-A: a\nb\r\n\r\n` },
  { name: 'a header line ended by a bare LF', request: (p) => `GET ${p} HTTP/1.1\r\n${H}X-A: ab\n\r\n` },
  { name: 'GET with Content-Length: 5', request: (p) => `GET ${p} HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello` },
  {
    name: 'GET with Transfer-Encoding: chunked',
    request: (p) => `GET ${p} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n${CHUNKED_HELLO}`,
  },
  {
    name: 'GET with Content-Length: 0 twice, then 5',
    request: (p) => `GET ${p} HTTP/1.1\r\n${H}Content-Length: 0\r\nContent-Length: 5\r\n\r\nhello`,
  },
  { name: 'HEAD with Content-Length: 5', request: (p) => `HEAD ${p} HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`, head: true },
  {
    name: 'HEAD with Transfer-Encoding: chunked',
    request: (p) => `HEAD ${p} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n${CHUNKED_HELLO}`,
    head: true,
  },
  { name: 'two Host fields', request: (p) => `GET ${p} HTTP/1.1\r\n${H}Host: y\r\n\r\n` },
];
