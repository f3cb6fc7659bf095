/**
 * @module Sends fuzz cases to the child service and judges the answers.
 *
 * The rules, for every case: an answer arrives within 10 s, its status is below 500, and a 4xx from
 * either front is an RFC 9457 problem document (`application/problem+json`, type/title/status/detail)
 * except where the request was not HTTP at all (the parser may answer a bare 400 or close) and, on
 * the MCP endpoint itself, where a JSON-RPC error object is the protocol's answer. Inside 200s from MCP,
 * a JSON-RPC "internal error" counts as a 500 and a tool error must carry a problem document below 500.
 */
import { connect } from 'node:net';
import { requestPath } from '../../src/http/request-target.ts';
import { CaseGenerator, type Credential, type FuzzCase, type FuzzContext } from './fuzz-cases.ts';
import type { FuzzService } from './fuzz-service.ts';

const TIMEOUT_MS = 10_000;

export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

export interface Failure {
  readonly case: FuzzCase;
  readonly reason: string;
  readonly answer?: Answer;
}

export interface RunResult {
  readonly sent: number;
  readonly failures: Failure[];
  readonly families: ReadonlyMap<string, number>;
  readonly rssStartKiB: number | null;
  readonly rssEndKiB: number | null;
  readonly rssMaxKiB: number | null;
  /** The process died during the run (the cases in flight at that moment are among the failures). */
  readonly died: boolean;
}

/** Real cursors of a few searches, to forge and replay against other queries. */
export async function learnContext(svc: FuzzService): Promise<FuzzContext> {
  const cursors: string[] = [];
  for (const q of [
    'zip=77002&age=30&per_page=1',
    'zip=77002&age=40&per_page=2&sort_by=name',
    'zip=77477&age=20&per_page=1',
    'zip=77002&age=30&per_page=3&sort_order=desc',
  ]) {
    const res = await fetch(`http://127.0.0.1:${svc.restPort}/v1/health/plans?${q}`, {
      headers: { authorization: svc.authorization.enterprise! },
    });
    const body = (await res.json()) as { next_cursor?: string };
    if (body.next_cursor !== undefined) cursors.push(body.next_cursor);
  }
  return { cursors };
}

/** One initialized MCP session per credential that can open one. */
async function openSessions(svc: FuzzService): Promise<Map<Credential, string>> {
  const sessions = new Map<Credential, string>();
  for (const cred of ['free', 'pro', 'enterprise'] as const) {
    const headers = {
      authorization: svc.authorization[cred]!,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    };
    const url = `http://127.0.0.1:${svc.mcpPort}/mcp`;
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}',
    });
    await res.text();
    const sid = res.headers.get('mcp-session-id');
    if (sid === null) throw new Error(`MCP initialize failed for ${cred}: ${res.status}`);
    const note = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
      body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    });
    await note.text();
    sessions.set(cred, sid);
  }
  return sessions;
}

function authorizationOf(c: FuzzCase, svc: FuzzService): string | null {
  return c.authorization ?? svc.authorization[c.credential];
}

async function sendFetch(c: FuzzCase, svc: FuzzService, sessions: ReadonlyMap<Credential, string>): Promise<Answer | 'client-refused'> {
  const port = c.front === 'rest' ? svc.restPort : svc.mcpPort;
  let headers: Headers;
  try {
    headers = new Headers(c.headers.map(([k, v]) => [k, v] as [string, string]));
    const auth = authorizationOf(c, svc);
    if (auth !== null) headers.set('authorization', auth);
    const sid = c.useSession === true ? sessions.get(c.credential) : undefined;
    if (sid !== undefined) headers.set('mcp-session-id', sid);
  } catch {
    return 'client-refused';
  }
  let res: Response;
  try {
    res = await fetch(`http://127.0.0.1:${port}${c.target}`, {
      method: c.method,
      headers,
      body: c.body,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    // undici refuses some inputs itself (a CONNECT, a body on GET): nothing reached the server.
    if (err instanceof TypeError && cause === undefined && !/fetch failed/.test(err.message)) return 'client-refused';
    throw err;
  }
  const body = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body };
}

/** Parses consecutive HTTP/1.x responses out of `buf` (content-length, chunked, or to the end). */
export function parseResponses(buf: Buffer): Answer[] {
  const out: Answer[] = [];
  let at = 0;
  while (at < buf.length) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const head = buf.subarray(at, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? NaN);
    const h = new Map(
      head.slice(1).map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as const),
    );
    let bodyStart = end + 4;
    let body: Buffer;
    if (h.get('transfer-encoding')?.includes('chunked') === true) {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = buf.indexOf('\r\n', bodyStart);
        if (lineEnd < 0) break;
        const size = parseInt(buf.subarray(bodyStart, lineEnd).toString('latin1'), 16);
        if (!Number.isFinite(size)) break;
        parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
        bodyStart = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
      at = bodyStart;
    } else if (h.has('content-length') && status !== 304 && !(status >= 100 && status < 200) && status !== 204) {
      const len = Number(h.get('content-length'));
      body = buf.subarray(bodyStart, bodyStart + len);
      at = bodyStart + len;
    } else if (status === 304 || status === 204) {
      body = Buffer.alloc(0);
      at = bodyStart;
    } else {
      body = buf.subarray(bodyStart);
      at = buf.length;
    }
    out.push({ status, contentType: h.get('content-type') ?? '', body: body.toString('utf8') });
  }
  return out;
}

async function sendRaw(c: FuzzCase, svc: FuzzService): Promise<Answer[] | 'closed' | 'reset-ok'> {
  const port = c.front === 'rest' ? svc.restPort : svc.mcpPort;
  const auth = authorizationOf(c, svc);
  const lines = [`${c.method} ${c.target} HTTP/${c.httpVersion}`, `Host: 127.0.0.1:${port}`];
  if (auth !== null) lines.push(`Authorization: ${auth}`);
  for (const [k, v] of c.headers) lines.push(`${k}: ${v}`);
  const one = (last: boolean): string => `${lines.join('\r\n')}${last && c.httpVersion === '1.1' ? '\r\nConnection: close' : ''}\r\n\r\n`;
  const n = c.pipeline ?? 1;
  const payload = Buffer.from(Array.from({ length: n }, (_, i) => one(i === n - 1)).join(''), 'latin1');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sock = connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no complete answer within ${TIMEOUT_MS} ms (${Buffer.concat(chunks).length} bytes received)`));
    }, TIMEOUT_MS);
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      if (c.resetAfterFirstByte === true) {
        clearTimeout(timer);
        sock.resetAndDestroy();
        resolve('reset-ok');
      }
    });
    sock.on('error', () => {
      // A reset by the server after its answer (or instead of one) is judged below from what arrived.
    });
    sock.on('close', () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks);
      if (all.length === 0) resolve('closed');
      else resolve(parseResponses(all));
    });
    sock.write(payload);
  });
}

const MCP_PATHS = new Set(['/mcp', '/', '/mcp/']);

function problemError(a: Answer, head: boolean): string | null {
  if (!a.contentType.startsWith('application/problem+json')) return `content-type "${a.contentType}" is not application/problem+json`;
  if (head) return null;
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(a.body) as Record<string, unknown>;
  } catch {
    return 'problem body is not JSON';
  }
  return problemDocError(doc, a.status);
}

function problemDocError(doc: Record<string, unknown>, status: number): string | null {
  for (const k of ['type', 'title', 'detail'] as const) if (typeof doc[k] !== 'string') return `problem without a string ${k}`;
  if (doc.status !== status) return `problem status ${String(doc.status)} ≠ ${status}`;
  return null;
}

/** JSON-RPC messages of an MCP answer: a JSON body or the `data:` lines of an event stream. */
function rpcMessages(a: Answer): unknown[] | null {
  const texts = a.contentType.startsWith('text/event-stream')
    ? a.body
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5))
    : [a.body];
  const out: unknown[] = [];
  for (const t of texts) {
    if (t.trim() === '') continue;
    try {
      const v = JSON.parse(t) as unknown;
      if (Array.isArray(v)) out.push(...(v as unknown[]));
      else out.push(v);
    } catch {
      return null;
    }
  }
  return out;
}

function isRpcError(m: unknown): m is { error: { code: number; message: string } } {
  const e = (m as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof e === 'object' && e !== null && typeof e.code === 'number' && typeof e.message === 'string';
}

/** What uWS's C++ parser signs its own error pages with; none of our answers carries it. */
const UWS_NATIVE_SIGNATURE = '<i>uWebSockets/20 Server</i>';
/** Request header bytes uWS reads (UWS_HTTP_MAX_HEADERS_SIZE, src/http/uws.ts) and its compiled-in field count. */
const UWS_MAX_HEADER_BYTES = 16 * 1024;
const UWS_MAX_HEADER_FIELDS = 100;
/** Headers fetch adds (host, connection, user-agent, accept, accept-language, sec-fetch-mode, accept-encoding). */
const FETCH_EXTRA_HEADER_BYTES = 256;
const FETCH_EXTRA_HEADER_FIELDS = 8;

/**
 * The few requests uWS's own parser refuses before any of our code runs, as docs/operations.md ("What
 * uWebSockets.js answers itself") documents: HTTP/1.0 (505 on the uWS build Node 22 loads), a header block over 16 KiB or with
 * over 100 fields (431), and a request line it cannot read (400/505). Only these, and only with uWS's
 * signature: anything else is held to the rules.
 */
function isNativeRefusal(c: FuzzCase, a: Answer): boolean {
  // A HEAD answer has no body to carry the signature; uWS's own pages also lack a content-type, ours never do.
  const native = a.body.includes(UWS_NATIVE_SIGNATURE) || (c.method === 'HEAD' && a.body === '' && a.contentType === '');
  if (c.front !== 'rest' || !native) return false;
  if (a.status === 431) return headerBlockOverLimit(c);
  if (a.status === 505 || a.status === 400) return c.httpVersion === '1.0' || c.malformed || unreadableRequestLine(c);
  return false;
}

/** Over uWS's header limits: its parser refuses the request before any of our code runs. */
function headerBlockOverLimit(c: FuzzCase): boolean {
  const bytes =
    c.method.length +
    c.target.length +
    64 +
    (c.authorization?.length ?? 80) +
    c.headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  return bytes + FETCH_EXTRA_HEADER_BYTES >= UWS_MAX_HEADER_BYTES || c.headers.length + FETCH_EXTRA_HEADER_FIELDS >= UWS_MAX_HEADER_FIELDS;
}

/**
 * uWS closes the connection after refusing a request itself; with pipelined requests still unread on
 * its side the close is a TCP reset, which can destroy its answer before the client reads it.
 */
function closedByUwsRefusal(c: FuzzCase): boolean {
  return c.front === 'rest' && (c.pipeline ?? 1) > 1 && (unreadableRequestLine(c) || headerBlockOverLimit(c) || c.httpVersion === '1.0');
}

/** A request line RFC 9112 does not allow: a method that is not a token, a target that is not origin-form or holds spaces, controls or raw non-ASCII. */
function unreadableRequestLine(c: FuzzCase): boolean {
  return !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(c.method) || !c.target.startsWith('/') || /[\x00-\x20\x7f-\xff]/.test(c.target);
}

/** Why an answer breaks the rules, or null. */
export function judge(c: FuzzCase, a: Answer): string | null {
  if (!Number.isInteger(a.status)) return 'unparseable status line';
  if (isNativeRefusal(c, a)) return null;
  if (a.status >= 500) return `status ${a.status}`;
  const head = c.method === 'HEAD';
  // Absolute-form targets (`http://x/mcp`) name the same resources as origin-form ones.
  const path = requestPath(c.target) ?? c.target.split('?')[0]!;
  // Not HTTP: whatever the parser answers (uWS says 431 to any request line it cannot read) short of a 5xx.
  if (c.malformed && a.status >= 400 && !a.contentType.startsWith('application/problem+json')) return null;
  if (c.front === 'mcp' && MCP_PATHS.has(path)) {
    if (a.status >= 400) {
      if (a.contentType.startsWith('application/problem+json')) return problemError(a, head);
      const msgs = head ? [] : rpcMessages(a);
      if (head || (msgs !== null && msgs.length > 0 && msgs.every(isRpcError))) return null;
      return `a ${a.status} that is neither a problem document nor a JSON-RPC error (${a.contentType})`;
    }
    if (a.status === 200 && !head) {
      const msgs = rpcMessages(a);
      if (msgs === null) return 'unparseable MCP answer';
      for (const m of msgs) {
        if (isRpcError(m) && m.error.code === -32603) return `JSON-RPC internal error: ${m.error.message}`;
        const r = (m as { result?: { isError?: boolean; content?: Array<{ text?: string }> } }).result;
        if (r?.isError === true) {
          let doc: Record<string, unknown>;
          try {
            doc = JSON.parse(r.content?.[0]?.text ?? '') as Record<string, unknown>;
          } catch {
            return 'tool error without a problem document';
          }
          if (typeof doc.status !== 'number' || doc.status >= 500) return `tool error with status ${String(doc.status)}`;
          const why = problemDocError(doc, doc.status);
          if (why !== null) return `tool error: ${why}`;
        }
      }
    }
    return null;
  }
  if (a.status >= 400) {
    return problemError(a, head);
  }
  return null;
}

/** Runs cases [from, from + count) of `seed` with `concurrency` in flight; stops early if the child dies. */
export async function runCases(
  svc: FuzzService,
  seed: number,
  from: number,
  count: number,
  opts: { concurrency?: number; ctx: FuzzContext; onProgress?: (done: number) => void; only?: readonly number[] },
): Promise<RunResult> {
  const gen = new CaseGenerator(seed, opts.ctx);
  const sessions = await openSessions(svc);
  const failures: Failure[] = [];
  const families = new Map<string, number>();
  const indexes = opts.only ?? Array.from({ length: count }, (_, i) => from + i);
  const warmup = Math.min(500, Math.floor(indexes.length / 10));
  let next = 0;
  let done = 0;
  let died = false;
  let rssStart: number | null = warmup === 0 ? svc.rssKiB() : null;
  let rssMax: number | null = null;
  const inFlight = new Set<FuzzCase>();
  const worker = async (): Promise<void> => {
    while (next < indexes.length && !died) {
      const c = gen.case(indexes[next++]!);
      families.set(c.family, (families.get(c.family) ?? 0) + 1);
      inFlight.add(c);
      try {
        if (c.via === 'raw') {
          const r = await sendRaw(c, svc);
          if (r === 'closed') {
            if (!c.malformed && !closedByUwsRefusal(c)) failures.push({ case: c, reason: 'connection closed without an answer' });
          } else if (r !== 'reset-ok') {
            if (r.length === 0) failures.push({ case: c, reason: 'no parseable answer' });
            for (const a of r) {
              const why = judge(c, a);
              if (why !== null) {
                failures.push({ case: c, reason: why, answer: a });
                break;
              }
            }
          }
        } else {
          const a = await sendFetch(c, svc, sessions);
          if (a !== 'client-refused') {
            const why = judge(c, a);
            if (why !== null) failures.push({ case: c, reason: why, answer: a });
          }
        }
      } catch (err) {
        failures.push({
          case: c,
          reason: `request failed: ${err instanceof Error ? `${err.message}${(err as { cause?: Error }).cause ? ` (${String((err as { cause?: Error }).cause?.message)})` : ''}` : String(err)}`,
        });
      }
      inFlight.delete(c);
      done++;
      if (done === warmup) rssStart = svc.rssKiB();
      if (done % 100 === 0) {
        const rss = svc.rssKiB();
        if (rss !== null && (rssMax === null || rss > rssMax)) rssMax = rss;
        opts.onProgress?.(done);
      }
      if (!svc.alive() && !died) {
        died = true;
        failures.push({
          case: c,
          reason: `the service process exited; cases in flight: ${[c, ...inFlight].map((x) => x.index).join(', ')}`,
        });
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
  const rssEnd = svc.rssKiB();
  return {
    sent: done,
    failures,
    families,
    rssStartKiB: rssStart,
    rssEndKiB: rssEnd,
    rssMaxKiB: rssMax === null ? rssEnd : Math.max(rssMax, rssEnd ?? 0),
    died: died || !svc.alive(),
  };
}

/** One failure as a replayable line: seed, index, family, the request and what came back. */
export function describeFailure(f: Failure): string {
  const c = f.case;
  const target = c.target.length > 200 ? `${c.target.slice(0, 200)}…(${c.target.length} chars)` : c.target;
  const answer =
    f.answer === undefined ? '' : ` → ${f.answer.status} ${f.answer.contentType} ${JSON.stringify(f.answer.body.slice(0, 200))}`;
  return `[seed ${c.seed} case ${c.index} ${c.family}] ${c.via} ${c.front} ${JSON.stringify(c.method)} ${JSON.stringify(target)} HTTP/${c.httpVersion} cred=${c.credential}${
    c.headers.length > 0
      ? ` headers=${c.headers.length}:${c.headers
          .slice(0, 3)
          .map(([k, v]) => `${k}(${v.length})`)
          .join(',')}`
      : ''
  }${c.authorization !== undefined ? ` authorization(${c.authorization.length})` : ''}${c.pipeline !== undefined ? ` pipeline=${c.pipeline}` : ''}${c.resetAfterFirstByte === true ? ' reset' : ''}${c.body !== undefined ? ` body=${JSON.stringify(c.body.slice(0, 160))}` : ''}: ${f.reason}${answer}`;
}
