/**
 * @module The SDK server of one MCP session: lists the tools and answers tools/call through the same
 * operations as REST, counting one unit of the daily quota per call.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LiveRegistry } from '../operations/live-registry.ts';
import { executeToBody, type OperationContext } from '../operations/operation.ts';
import { threadScratch } from '../operations/request-scratch.ts';
import { RATE_LIMITED, validationDetail, validationProblem } from '../operations/problems.ts';
import { suggestion } from '../operations/suggest.ts';
import type { Quota } from '../policy/quota.ts';
import type { RequestMetrics } from '../observability/request-metrics.ts';
import type { Principal } from './credentials.ts';
import { problemDoc, type ProblemLinks } from './http-replies.ts';
import { TOOL_BY_NAME, TOOLS, toolAlternatives, toolArgsToRequest, toolField, type ToolDefinition } from './tools.ts';

export interface ToolServerDeps {
  readonly live: LiveRegistry;
  readonly quota: Quota;
  readonly links: ProblemLinks;
  readonly version?: string;
  readonly metrics?: RequestMetrics;
}

export function createToolServer(deps: ToolServerDeps): Server {
  const server = new Server(
    { name: 'health-plan-data', version: deps.version ?? '0.0.0' },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object'; properties?: Record<string, object> },
      outputSchema: t.outputSchema as { type: 'object'; properties?: Record<string, object> },
      annotations: { title: t.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const tool = TOOL_BY_NAME.get(request.params.name);
    if (tool === undefined) {
      const name = request.params.name;
      throw new RpcError(
        ErrorCode.InvalidParams,
        `Unknown tool ${name}${suggestion(
          name,
          TOOLS.map((t) => t.name),
        )}`,
      );
    }
    const who = (extra.authInfo?.extra as { principal?: Principal } | undefined)?.principal;
    // The listener authenticates every request before the transport sees it.
    if (who === undefined) throw new RpcError(ErrorCode.InternalError, 'No authenticated principal');
    return callTool(deps, tool, (request.params.arguments ?? {}) as Record<string, unknown>, who);
  });
  return server;
}

/**
 * A JSON-RPC error the SDK sends as it is: its `code` and `message` become the error object's. The SDK's
 * McpError would do, but it writes "MCP error -32602: " into its message, and SDK clients add that
 * prefix again when they turn the response into an error, so users read it twice.
 */
class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

const toolError = (doc: Record<string, unknown>): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: JSON.stringify(doc) }],
});

async function callTool(
  deps: ToolServerDeps,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  who: Principal,
): Promise<CallToolResult> {
  const req = toolArgsToRequest(tool, args);
  const instance = req.ok ? req.restPath : tool.operation.path;
  const decision = await deps.quota.consume(who.userId, who.tier);
  if (!decision.allowed) deps.metrics?.quotaRefused(who.tier);
  if (!decision.allowed) return toolError(problemDoc(deps.links, RATE_LIMITED, instance));
  if (!req.ok) return toolError(problemDoc(deps.links, validationProblem(req.errors, toolAlternatives(tool)).spec, instance));
  // A tool call runs synchronously from here: one snapshot answers all of it.
  const ctx: OperationContext = { registry: deps.live.current(), baseUrl: deps.links.baseUrl };
  const result = executeToBody(tool.operation, ctx, who.tier, req.query, req.pathParams, threadScratch());
  if (!result.ok) {
    // Errors name the tool's arguments (`plan_ids`, not REST's `ids`), and so does the detail written from them.
    const errors = result.problem.errors?.map((e) => ({ field: toolField(tool, e.field), message: e.message }));
    const spec =
      errors === undefined ? result.problem : { ...result.problem, errors, detail: validationDetail(errors, toolAlternatives(tool)) };
    return toolError(problemDoc(deps.links, spec, instance));
  }
  const body = result.body;
  return {
    content: [
      { type: 'text', text: tool.summarize(body) },
      { type: 'text', text: JSON.stringify(body) },
    ],
    structuredContent: body,
  };
}
