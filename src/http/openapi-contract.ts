/**
 * @module The build-independent contract of the OpenAPI document: what generated client types depend
 * on. Served documents differ from one build or deployment to another only by their examples (real
 * responses of the data, and the parameters of the requests that answered them), `info.x-data-build`, and `servers` and `info.license` (URLs of the deployment); none of them changes
 * a type, so the contract leaves them out. The checked-in client types record the sha256 of this
 * contract, and a test compares it with the contract of the document a real server serves, without
 * generating anything.
 */
import { createHash } from 'node:crypto';

/** A copy of a document without examples, the data build, the servers and the licence (its URL is the deployment's). */
export function openApiContract(doc: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { servers: _servers, ...rest } = doc;
  const text = JSON.stringify(rest, (key, value: unknown) => {
    // The licence URL names the deployment's own plans page.
    if (key === 'x-data-build' || key === 'license') return undefined;
    // A parameter's example is a value of the served build's example request (openapi-examples.ts).
    if (value !== null && typeof value === 'object' && 'in' in value && 'name' in value && 'example' in value) {
      const { example: _example, ...kept } = value as Record<string, unknown>;
      return kept;
    }
    // Media types sit directly under `content`.
    if (key === 'content' && value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value).map(([type, media]) => {
          const { example: _example, ...kept } = media as Record<string, unknown>;
          return [type, kept];
        }),
      );
    }
    return value;
  });
  return JSON.parse(text) as Record<string, unknown>;
}

export function contractSha256(doc: Readonly<Record<string, unknown>>): string {
  return createHash('sha256')
    .update(JSON.stringify(openApiContract(doc)))
    .digest('hex');
}
