/**
 * @module Field-by-field comparison of two JSON bodies, for the check that the baseline answers the
 * same thing as our server (and that the ceiling replays our bytes).
 */

/** Paths (`_embedded.plans.3.premium`) where `a` and `b` differ; empty when they are equal. */
export function jsonDiff(a: unknown, b: unknown, path = '', out: string[] = [], limit = 20): string[] {
  if (out.length >= limit) return out;
  if (a === b) return out;
  if (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b)) return out;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) out.push(`${path || '(root)'}: array length ${a.length} ≠ ${b.length}`);
    for (let i = 0; i < Math.min(a.length, b.length); i++) jsonDiff(a[i], b[i], path === '' ? String(i) : `${path}.${i}`, out, limit);
    return out;
  }
  if (isObject(a) && isObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const p = path === '' ? k : `${path}.${k}`;
      if (!(k in a)) out.push(`${p}: missing on the left`);
      else if (!(k in b)) out.push(`${p}: missing on the right`);
      else jsonDiff(a[k], b[k], p, out, limit);
      if (out.length >= limit) break;
    }
    return out;
  }
  out.push(`${path || '(root)'}: ${JSON.stringify(a)?.slice(0, 80)} ≠ ${JSON.stringify(b)?.slice(0, 80)}`);
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface FetchedResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Array<[string, string]>;
  readonly body: string;
}

/** Headers the HTTP library writes itself (uWS adds these to every response), left out of recordings. */
const AUTOMATIC = new Set(['date', 'content-length', 'uwebsockets', 'connection', 'keep-alive', 'transfer-encoding']);

export async function fetchResponse(origin: string, path: string, headers: Readonly<Record<string, string>>): Promise<FetchedResponse> {
  // Identity, as wrk asks: a recorded Content-Encoding with fetch's decoded body would make the
  // ceiling replay a header that does not match its bytes.
  const r = await fetch(`${origin}${path}`, { headers: { 'accept-encoding': 'identity', ...headers } });
  const body = await r.text();
  const list: Array<[string, string]> = [];
  r.headers.forEach((value, name) => {
    if (!AUTOMATIC.has(name)) list.push([name, value]);
  });
  return { status: r.status, statusText: r.statusText, headers: list, body };
}

/** Runs `fn` over `items` with at most `n` in flight; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], n: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      for (;;) {
        const i = next++;
        if (i >= items.length) return;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}
