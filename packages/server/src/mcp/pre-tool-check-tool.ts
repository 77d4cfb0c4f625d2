/**
 * The MCP tool `aana_pre_tool_check`: an Agent Action Contract v1 event as arguments, the decision
 * envelope back, with the route in `structuredContent.route` (the host runs the original tool only
 * when it is `accept`). The input schema is the contract's JSON schema, word for word.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ROUTES } from "@acp/core";
import { CONTRACT_EVENT_BODY } from "../http/schemas.js";
import {
  AgentMismatchError,
  AuditUnavailableError,
  ServerNotAllowedError,
  type DecisionService,
} from "../service/decision-service.js";
import { AUDIT_UNAVAILABLE_MESSAGE } from "../service/service-errors.js";

/** The tool's name, as the contract document gives it. */
export const PRE_TOOL_CHECK_TOOL = "aana_pre_tool_check";

const OUTPUT_SCHEMA = {
  type: "object" as const,
  required: ["route", "gate_decision", "recommended_action", "hard_blockers"],
  properties: {
    route: { type: "string", enum: [...ROUTES] },
    gate_decision: { type: "string", enum: ["pass", "fail"] },
    recommended_action: { type: "string", enum: [...ROUTES] },
    hard_blockers: { type: "array", items: { type: "string" } },
  },
};

const DESCRIPTION =
  "Check a proposed tool call (an Agent Action Contract v1 event) before running it. Read " +
  "structuredContent.route and run the original tool only when it is `accept` and hard_blockers is empty; " +
  "ask, defer and refuse mean do not run it.";

/**
 * A failed check as a tool error (nothing to run), named by the service's error code: an event naming
 * another agent than its token's says so; an audit trail that cannot record and any other failure say only
 * that (the cause, a path or the database's address, goes to the service log, never to the agent).
 */
function toolError(err: unknown, log: ((line: string) => void) | undefined): CallToolResult {
  const text = (message: string): CallToolResult => ({ isError: true, content: [{ type: "text", text: message }] });
  // a token that names its agent, and an event naming another: nothing decided
  if (err instanceof AgentMismatchError) return text(`agent_mismatch: ${err.message}`);
  if (err instanceof ServerNotAllowedError) return text(`server_not_allowed: ${err.message}`);
  if (err instanceof AuditUnavailableError) return text(`audit_unavailable: ${AUDIT_UNAVAILABLE_MESSAGE}`);
  log?.(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return text("internal_error: internal error (see the service log)");
}

/** A fresh MCP server with the one tool (one per connection or per stateless HTTP request). */
export function createPreToolCheckMcpServer(
  service: DecisionService,
  caller?: string,
  log?: (line: string) => void,
): Server {
  // The low-level server publishes the contract's JSON schema as is; the high-level one wants zod.
  const server = new Server({ name: "acp-serve", version: "0.1.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      {
        name: PRE_TOOL_CHECK_TOOL,
        title: "Agent Action Contract v1 pre-tool check",
        description: DESCRIPTION,
        inputSchema: { ...CONTRACT_EVENT_BODY, type: "object" as const },
        outputSchema: OUTPUT_SCHEMA,
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    if (request.params.name !== PRE_TOOL_CHECK_TOOL) {
      return {
        isError: true,
        content: [{ type: "text", text: `unknown tool \`${request.params.name.slice(0, 100)}\`` }],
      };
    }
    let envelope;
    try {
      ({ envelope } = await service.preToolCheck(request.params.arguments ?? {}, "mcp", caller));
    } catch (err) {
      return toolError(err, log);
    }
    const structured = { route: envelope.architecture_decision.route, ...envelope };
    return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
  });
  return server;
}
