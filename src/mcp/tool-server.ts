/**
 * @module The SDK server of one MCP session: lists the tools and answers tools/call through the same
 * operations as REST, counting one unit of the daily quota per call.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { RATE_LIMITED } from '../http/front-problems.ts';
import type { LiveRegistry } from '../operations/live-registry.ts';
import { execute, type OperationContext } from '../operations/operation.ts';
import type { Quota } from '../policy/quota.ts';
import type { RequestMetrics } from '../observability/request-metrics.ts';
import type { Principal } from './credentials.ts';
import { problemDoc, type ProblemLinks } from './http-replies.ts';
import { TOOL_BY_NAME, TOOLS, toolArgsToRequest, toolField, type ToolDefinition } from './tools.ts';

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
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}`);
    const who = (extra.authInfo?.extra as { principal?: Principal } | undefined)?.principal;
    // The listener authenticates every request before the transport sees it.
    if (who === undefined) throw new McpError(ErrorCode.InternalError, 'No authenticated principal');
    return callTool(deps, tool, (request.params.arguments ?? {}) as Record<string, unknown>, who);
  });
  return server;
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
  if (!req.ok)
    return toolError(
      problemDoc(
        deps.links,
        {
          kind: 'validation',
          detail: req.errors.length === 1 ? `Invalid ${req.errors[0]!.field}: ${req.errors[0]!.message}.` : 'Invalid input.',
          errors: req.errors,
        },
        instance,
      ),
    );
  // A tool call runs synchronously from here: one snapshot answers all of it.
  const ctx: OperationContext = { registry: deps.live.current(), baseUrl: deps.links.baseUrl };
  const result = execute(tool.operation, ctx, who.tier, req.query, req.pathParams);
  if (!result.ok) {
    const spec =
      result.problem.errors === undefined
        ? result.problem
        : { ...result.problem, errors: result.problem.errors.map((e) => ({ field: toolField(tool, e.field), message: e.message })) };
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
