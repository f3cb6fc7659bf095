/**
 * @module The path of an HTTP request target as `node:http` hands it over (`req.url`), parsed without
 * throwing: `new URL(req.url, base)` reads `//` as a scheme-relative URL with an empty host and throws,
 * and so does a malformed absolute-form target such as `http://[`, which turned such request lines
 * into 500s (MCP) or crashes in a framework's URL parser (the authorization server's Koa).
 */

/**
 * The normalised path of an origin-form (`/mcp?x`) or absolute-form (`http://host/mcp`) target;
 * undefined when it is neither (`*`, `http://[`).
 *
 * @example requestPath('//') === '//'; requestPath('http://[') === undefined
 */
export function requestPath(target: string): string | undefined {
  try {
    return (target.startsWith('/') ? new URL(`http://h${target}`) : new URL(target)).pathname;
  } catch {
    return undefined;
  }
}
