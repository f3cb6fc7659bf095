/** @module One request on a connection already open, to learn whether the server still serves it. */
import type { Socket } from 'node:net';

/**
 * Sends `GET path` on `s` and resolves to the status line of the answer, or to 'closed' when the server
 * closes the connection without answering (a connection refused over a cap is closed, not answered).
 */
export function statusLine(s: Socket, path = '/healthz'): Promise<string> {
  if (s.closed) return Promise.resolve('closed');
  return new Promise((resolve) => {
    let got = '';
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      const end = got.indexOf('\r\n');
      if (end >= 0) resolve(got.slice(0, end));
    });
    s.once('close', () => resolve(got === '' ? 'closed' : `closed after ${JSON.stringify(got)}`));
    s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}
