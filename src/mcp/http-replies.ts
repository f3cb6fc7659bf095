/**
 * @module The MCP listener's plain HTTP answers, written before (or instead of) the SDK transport:
 * problem documents, JSON-RPC errors, and the request body read with its size cap.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toProblemBody, type ProblemSpec } from '../operations/problems.ts';

const MAX_BODY = 1 << 20;

/** Where problem `type`s and the upgrade link of a problem point: the REST origin. */
export interface ProblemLinks {
  readonly baseUrl: string;
  readonly upgradeUrl: string;
}

export function problemDoc(links: ProblemLinks, spec: ProblemSpec, instance: string): Record<string, unknown> {
  return { ...toProblemBody(spec, links.baseUrl, instance, links.upgradeUrl) };
}

export function sendJson(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

export function sendProblem(
  res: ServerResponse,
  links: ProblemLinks,
  spec: ProblemSpec,
  instance: string,
  headers: Record<string, string> = {},
): void {
  const doc = problemDoc(links, spec, instance);
  const body = JSON.stringify(doc);
  res.writeHead(doc.status as number, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

export function sendRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The body as JSON, or the HTTP status and JSON-RPC message refusing it. */
export function readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; status: number; message: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        // Stop reading (an endless body must not be consumed) but keep the socket for the 413; the
        // answer closes the connection.
        req.removeAllListeners('data');
        req.pause();
        resolve({ ok: false, status: 413, message: 'Request body too large' });
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      } catch {
        resolve({ ok: false, status: 400, message: 'Parse error: the body is not JSON' });
      }
    });
    req.on('error', () => resolve({ ok: false, status: 400, message: 'Request body could not be read' }));
  });
}
