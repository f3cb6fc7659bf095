/**
 * @module JSON-RPC requests whose params do not fit their method, found before the SDK sees them.
 *
 * The SDK parses a request with its method's schema before calling the handler and reports a failed
 * parse as -32603 "Internal error": a client's mistake (`arguments: 5`, `initialize` without
 * `clientInfo`) presented as a fault of the server. Checking the same schemas first lets the server
 * answer -32602 "Invalid params" naming the first offending member, as JSON-RPC 2.0 intends.
 */
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

interface Issue {
  readonly path: ReadonlyArray<PropertyKey>;
  readonly message: string;
}

interface RequestSchema {
  safeParse(value: unknown): { success: boolean; error?: { issues?: readonly Issue[] } };
}

/** The methods this server handles; others reach the SDK, which answers "Method not found". */
const SCHEMAS: ReadonlyMap<string, RequestSchema> = new Map<string, RequestSchema>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

export const INVALID_PARAMS = -32602;

export interface InvalidParams {
  /** The request's id, so the client can match the error to it. */
  readonly id: string | number | null;
  readonly message: string;
}

/** The first request in a JSON-RPC message (or batch) whose params do not fit its method, or null. */
export function findInvalidParams(body: unknown): InvalidParams | null {
  for (const message of Array.isArray(body) ? (body as unknown[]) : [body]) {
    if (typeof message !== 'object' || message === null) continue;
    const { method, id } = message as { method?: unknown; id?: unknown };
    // Notifications (no id) and responses (no method) get no answer to carry an error.
    if (typeof method !== 'string' || id === undefined) continue;
    const schema = SCHEMAS.get(method);
    if (schema === undefined) continue;
    const parsed = schema.safeParse(message);
    if (parsed.success) continue;
    const issue = parsed.error?.issues?.[0];
    const where = issue === undefined ? '' : `: ${issue.path.map(String).join('.') || '(request)'}: ${issue.message}`;
    return { id: typeof id === 'string' || typeof id === 'number' ? id : null, message: `Invalid params for ${method}${where}` };
  }
  return null;
}
