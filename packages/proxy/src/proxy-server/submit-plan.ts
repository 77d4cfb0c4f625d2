import type { CallToolRequest, CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { AcpProxy, ProxySession } from "./acp-proxy.js";
import { messageOf } from "../upstream/upstream-pool.js";

/** The tool name the proxy adds when a plan hook is configured. */
export const SUBMIT_PLAN_NAME = "acp_submit_plan";

/** The tool the agent sees: a plan of steps, validated against the intent and approved by a person. */
export const SUBMIT_PLAN_TOOL: Tool = {
  name: SUBMIT_PLAN_NAME,
  description:
    "Propose the plan for this task before acting: ordered steps, each an action (`server.tool`) with " +
    "argument constraints. ACP checks it against the user's intent and asks the user to approve it; " +
    "afterwards only actions in the approved plan run.",
  inputSchema: {
    type: "object",
    properties: {
      plan: {
        type: "object",
        description:
          "{ steps: [{ action: 'server.tool', constraints?: { arg: { exact | glob | one_of | from_trusted } } }] }",
      },
    },
    required: ["plan"],
  },
};

/** Handles `acp_submit_plan`: the hook validates, asks a person, and says what happened. Never throws. */
export async function handleSubmitPlan(
  proxy: AcpProxy,
  session: ProxySession,
  request: CallToolRequest,
  signal: AbortSignal,
  agent?: string,
): Promise<CallToolResult> {
  const sessionId = session.id;
  const hook = proxy.options.plans;
  if (hook === undefined) return { isError: true, content: [{ type: "text", text: "plans are not enabled" }] };
  try {
    const tools = proxy.pool.connected().flatMap((u) => u.tools.map((t) => `${u.spec.name}.${t.name}`));
    const outcome = await hook.submit(sessionId, request.params.arguments?.["plan"], signal, {
      tools,
      ...(agent !== undefined ? { agent } : {}),
      ...(session.agent !== undefined ? { tokenAgent: session.agent } : {}),
    });
    await proxy.audit("policy_evaluated", {
      session_id: sessionId,
      tool: SUBMIT_PLAN_NAME,
      decision: outcome.approved ? "accept" : "refuse",
      policy_rule: "session:plan_approval",
      reasons: [{ source: "session", code: "plan_approval", message: outcome.text }],
    });
    return { isError: !outcome.approved, content: [{ type: "text", text: outcome.text }] };
  } catch (err) {
    return { isError: true, content: [{ type: "text", text: `the plan was not accepted: ${messageOf(err)}` }] };
  }
}
