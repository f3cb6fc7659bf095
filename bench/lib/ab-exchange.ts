/**
 * @module One side of the A/B response comparison: the requests of a case sent to one server over
 * node:http (the raw bytes: no decompression, HEAD as HEAD, headers in the order written), the part of
 * each answer that is compared, and the differences between two sides' answers.
 */
import type { Hash } from 'node:crypto';
import { request, type Agent } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { AbCase, AbRequest, KeyName } from './ab-requests.ts';
import { jsonDiff } from './verify.ts';

/**
 * Response headers that differ between two identical requests, so they are not compared: the clock
 * (date, the quota window's reset, a retry delay), the request's id, and the quota left, which counts
 * every request the key made before, in an order that concurrency makes differ between the sides.
 * Connection management (connection, keep-alive) is the client's, not the answer's.
 */
export const PER_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'date',
  'x-request-id',
  'ratelimit-remaining',
  'ratelimit-reset',
  'retry-after',
  'connection',
  'keep-alive',
]);

/** A server under comparison. */
export interface Side {
  readonly name: string;
  readonly origin: string;
  readonly agent: Agent;
  /** The key of each tier; `none` sends no Authorization. */
  readonly keys: Readonly<Record<KeyName, string | null>>;
}

export interface Exchange {
  readonly method: string;
  readonly path: string;
  /** The request headers that shape the answer, as sent (key tier, Accept-Encoding, If-None-Match). */
  readonly sent: string;
  /** 0 when no answer came (the error is the body). */
  readonly status: number;
  /** Lower-case names, in the order the server wrote them, without {@link PER_REQUEST_HEADERS}. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer;
}

const TIMEOUT_MS = 30_000;

function send(side: Side, req: AbRequest, ifNoneMatch: string | null): Promise<Exchange> {
  const key = side.keys[req.key];
  const headers: Record<string, string> = { 'accept-encoding': req.acceptEncoding ?? 'identity' };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (ifNoneMatch !== null) headers['if-none-match'] = ifNoneMatch;
  const sent = `key=${req.key} accept-encoding=${headers['accept-encoding']}${ifNoneMatch === null ? '' : ` if-none-match=${ifNoneMatch}`}`;
  const base = { method: req.method, path: req.path, sent };
  return new Promise((resolve) => {
    const r = request(`${side.origin}${req.path}`, { method: req.method, headers, agent: side.agent, timeout: TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => resolve(unanswered(base, err)));
      res.on('end', () => {
        const kept: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!.toLowerCase();
          if (!PER_REQUEST_HEADERS.has(name)) kept.push([name, res.rawHeaders[i + 1]!]);
        }
        resolve({ ...base, status: res.statusCode ?? 0, headers: kept, body: Buffer.concat(chunks) });
      });
    });
    r.on('timeout', () => r.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    r.on('error', (err) => resolve(unanswered(base, err)));
    r.end();
  });
}

/** A request that got no answer: status 0, the error's code as the body (no port in it: both sides alike). */
function unanswered(base: Pick<Exchange, 'method' | 'path' | 'sent'>, err: NodeJS.ErrnoException): Exchange {
  return { ...base, status: 0, headers: [], body: Buffer.from(`error: ${err.code ?? err.message}`) };
}

function header(e: Exchange, name: string): string | undefined {
  return e.headers.find(([n]) => n === name)?.[1];
}

/** The body as text, decoded from its Content-Encoding. */
export function bodyText(e: Exchange): string {
  const enc = header(e, 'content-encoding');
  try {
    if (enc === 'br') return brotliDecompressSync(e.body).toString('utf8');
    if (enc === 'gzip') return gunzipSync(e.body).toString('utf8');
    if (enc === 'deflate') return inflateSync(e.body).toString('utf8');
  } catch (err) {
    return `(undecodable ${enc} body: ${(err as Error).message})`;
  }
  return e.body.toString('utf8');
}

function nextCursor(e: Exchange): string | null {
  if (e.status !== 200 || e.method !== 'GET') return null;
  try {
    const body = JSON.parse(bodyText(e)) as { next_cursor?: unknown };
    return typeof body.next_cursor === 'string' ? body.next_cursor : null;
  } catch {
    return null;
  }
}

/**
 * Every request of a case on one side, in order: the first, then those made from this side's own
 * answers (the next pages by their cursors, the revalidation with the ETag received).
 */
export async function runCase(side: Side, c: AbCase): Promise<Exchange[]> {
  const first = await send(side, c.first, null);
  const out = [first];
  if (c.follow?.kind === 'pages') {
    let last = first;
    for (let i = 0; i < c.follow.n; i++) {
      const cursor = nextCursor(last);
      if (cursor === null) break;
      last = await send(side, { ...c.first, path: `${c.first.path}&cursor=${encodeURIComponent(cursor)}` }, null);
      out.push(last);
    }
  } else if (c.follow?.kind === 'revalidate') {
    const etag = header(first, 'etag');
    if (etag !== undefined) out.push(await send(side, c.first, c.follow.stale ? 'W/"0-stale"' : etag));
  }
  return out;
}

/** Feeds an exchange to a side's digest: method, path, request headers, status, compared headers, body. */
export function digestExchange(hash: Hash, e: Exchange): void {
  hash.update(`${e.method} ${e.path}\n${e.sent}\n${e.status}\n`);
  for (const [n, v] of e.headers) hash.update(`${n}: ${v}\n`);
  hash.update(`\n${e.body.length}\n`);
  hash.update(e.body);
  hash.update('\n');
}

/**
 * One difference: its text, and its kind (the header's name, the body's JSON path with indices as `*`),
 * by which a run counts them: one cause shows as one kind however many answers it touches.
 */
export interface Difference {
  readonly kind: string;
  readonly text: string;
}

/** What differs between two sides' answers to one case; empty when they are the same bytes. */
export function caseDifferences(a: readonly Exchange[], b: readonly Exchange[]): Difference[] {
  const out: Difference[] = [];
  if (a.length !== b.length) out.push({ kind: 'requests', text: `requests: ${a.length} ≠ ${b.length} (a walk ended early on one side)` });
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    const at = i === 0 ? '' : ` (request ${i + 1} of the case: ${x.method} ${x.path})`;
    if (x.path !== y.path) out.push({ kind: 'path', text: `path${at}: ${x.path} ≠ ${y.path}` });
    if (x.status !== y.status) out.push({ kind: `status ${x.status} ≠ ${y.status}`, text: `status${at}: ${x.status} ≠ ${y.status}` });
    const hx = x.headers.map(([n, v]) => `${n}: ${v}`);
    const hy = y.headers.map(([n, v]) => `${n}: ${v}`);
    if (hx.join('\n') !== hy.join('\n')) {
      const only = (p: string[], q: string[]) => p.filter((h) => !q.includes(h));
      const ox = only(hx, hy);
      const oy = only(hy, hx);
      const names = [...new Set([...ox, ...oy].map((h) => h.slice(0, h.indexOf(':'))))].sort();
      out.push(
        ox.length === 0 && oy.length === 0
          ? {
              kind: 'header order',
              text: `headers${at}: same headers in another order (${hx.map((h) => h.split(':')[0]).join(', ')} ≠ ${hy.map((h) => h.split(':')[0]).join(', ')})`,
            }
          : {
              kind: `header ${names.join(', ')}`,
              text: `headers${at}: ${ox.map(clip).join(' | ') || '(none)'} ≠ ${oy.map(clip).join(' | ') || '(none)'}`,
            },
      );
    }
    if (!x.body.equals(y.body)) out.push(...bodyDifferences(x, y, at));
  }
  return out;
}

/** A header line cut to a readable length (a Link header runs to a kilobyte). */
function clip(line: string): string {
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}

function bodyDifferences(x: Exchange, y: Exchange, at: string): Difference[] {
  const tx = bodyText(x);
  const ty = bodyText(y);
  if (tx === ty)
    return [{ kind: 'body bytes', text: `body${at}: same text, other bytes (${x.body.length} ≠ ${y.body.length} bytes as sent)` }];
  try {
    const diff = jsonDiff(JSON.parse(tx), JSON.parse(ty), '', [], 10);
    if (diff.length === 0) return [{ kind: 'body text', text: `body${at}: same JSON, other text (key order or number spelling)` }];
    return diff.map((d) => ({ kind: `body ${d.slice(0, d.indexOf(': ')).replace(/(^|\.)\d+(?=\.|$)/g, '$1*')}`, text: `body${at}: ${d}` }));
  } catch {
    let i = 0;
    while (i < tx.length && tx[i] === ty[i]) i++;
    return [
      {
        kind: 'body text',
        text: `body${at}: differs at character ${i}: ${JSON.stringify(tx.slice(i, i + 60))} ≠ ${JSON.stringify(ty.slice(i, i + 60))}`,
      },
    ];
  }
}
