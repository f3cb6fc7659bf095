/**
 * @module Content negotiation and conditional requests (docs/compatibility.md#transport-and-methods,
 * docs/compatibility.md#conditional-requests).
 */

const JSON_TYPES = new Set(['*/*', 'application/*', 'application/json', 'application/hal+json', 'application/problem+json']);

/** True when the Accept header admits JSON (absent, a JSON type or a wildcard with q > 0). */
export function acceptsJson(accept: string): boolean {
  // What nearly every client sends, answered without splitting the header.
  if (accept === '' || accept === 'application/json' || accept === '*/*') return true;
  if (accept.trim() === '') return true;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (type === undefined || !JSON_TYPES.has(type)) continue;
    const q = params.find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

/** Weak comparison of If-None-Match against an ETag (its text, or its bytes); `*` matches anything. */
export function ifNoneMatchMatches(header: string, etag: string | Buffer): boolean {
  if (header === '') return false;
  const bare = (typeof etag === 'string' ? etag : etag.toString('latin1')).replace(/^W\//, '');
  for (const raw of header.split(',')) {
    const t = raw.trim();
    if (t === '*' || t.replace(/^W\//, '') === bare) return true;
  }
  return false;
}

/** RFC 8288 Link header from a HAL `_links` object (templated links are left out). */
export function linkHeader(links: unknown, serviceDesc: string): string {
  let out = '';
  if (typeof links === 'object' && links !== null) {
    const byRel = links as Record<string, { href?: string; templated?: boolean } | undefined>;
    for (const rel in byRel) {
      const value = byRel[rel];
      if (value?.href === undefined || value.templated === true) continue;
      out += `<${value.href}>; rel="${rel}", `;
    }
  }
  return `${out}<${serviceDesc}>; rel="service-desc"`;
}
