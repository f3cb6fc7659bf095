/**
 * @module One raw HTTP/1.1 exchange over node:net: bytes written in one write, everything the server
 * sends read until it closes the connection (or a bound passes), and split into responses by their
 * own framing, so a test can count how many requests of a pipelined write were answered.
 */
import { connect } from 'node:net';

export interface RawResponse {
  readonly status: number;
  /** The status line and header fields, names lowercased. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: string;
}

export interface RawExchange {
  /** Every complete response, in order; bytes that are not one are in `rest`. */
  readonly responses: readonly RawResponse[];
  /** What was left after the last complete response ('' when everything was a response). */
  readonly rest: string;
  /** The whole byte stream as latin1 text. */
  readonly raw: string;
  /** True when the server closed the connection (FIN or reset) before the bound. */
  readonly closed: boolean;
  /** Milliseconds from the write to the close (or to the bound). */
  readonly ms: number;
}

/**
 * Writes `bytes` (latin1 when a string) on a fresh connection to 127.0.0.1:`port` and reads until the
 * server closes or `ms` pass. `headRequest` true: a response without a body is expected first (HEAD).
 */
export function rawExchange(port: number, bytes: string | Buffer, ms = 3000, headRequest = false): Promise<RawExchange> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const t0 = performance.now();
    let closedByServer = false;
    const socket = connect(port, '127.0.0.1', () => socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes));
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('end', () => (closedByServer = true));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') closedByServer = true;
    });
    socket.once('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      resolve({ ...splitResponses(raw, headRequest), raw, closed: closedByServer, ms: performance.now() - t0 });
    });
  });
}

/** Splits a response stream by Content-Length or chunked framing; the first one may answer a HEAD. */
export function splitResponses(raw: string, headFirst = false): { responses: RawResponse[]; rest: string } {
  const responses: RawResponse[] = [];
  let at = 0;
  while (at < raw.length) {
    const end = raw.indexOf('\r\n\r\n', at);
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(raw.slice(at, at + 16));
    if (end < 0 || m === null) break;
    const lines = raw.slice(at, end).split('\r\n');
    const headers = lines.slice(1).map((l): [string, string] => {
      const colon = l.indexOf(':');
      return [l.slice(0, colon).trim().toLowerCase(), l.slice(colon + 1).trim()];
    });
    const field = (name: string): string | undefined => headers.find(([k]) => k === name)?.[1];
    const status = Number(m[1]);
    let bodyStart = end + 4;
    let body = '';
    const noBody = (headFirst && responses.length === 0) || status === 204 || status === 304 || status < 200;
    if (!noBody) {
      const length = field('content-length');
      if (field('transfer-encoding')?.toLowerCase() === 'chunked') {
        let p = bodyStart;
        for (;;) {
          const lineEnd = raw.indexOf('\r\n', p);
          if (lineEnd < 0) return { responses, rest: raw.slice(at) };
          const size = Number.parseInt(raw.slice(p, lineEnd), 16);
          if (!Number.isFinite(size)) return { responses, rest: raw.slice(at) };
          p = lineEnd + 2;
          if (size === 0) {
            const trailerEnd = raw.indexOf('\r\n', p);
            if (trailerEnd < 0) return { responses, rest: raw.slice(at) };
            p = trailerEnd + 2;
            break;
          }
          body += raw.slice(p, p + size);
          p += size + 2;
        }
        bodyStart = p;
      } else if (length !== undefined) {
        if (raw.length < bodyStart + Number(length)) return { responses, rest: raw.slice(at) };
        body = raw.slice(bodyStart, bodyStart + Number(length));
        bodyStart += Number(length);
      } else {
        // Delimited by the close.
        body = raw.slice(bodyStart);
        bodyStart = raw.length;
      }
    }
    responses.push({ status, headers, body });
    at = bodyStart;
  }
  return { responses, rest: raw.slice(at) };
}
