import { describe, expect, it } from "vitest";
import { checkToolPrecheck, shouldExecuteTool, toolPrecheckEvent } from "../../src/contract/index.js";

describe("toolPrecheckEvent", () => {
  it("builds the document's TypeScript SDK example, which may execute", () => {
    const event = toolPrecheckEvent({
      toolName: "get_recent_transactions",
      toolCategory: "private_read",
      authorizationState: "authenticated",
      evidenceRefs: ["auth.session"],
      riskDomain: "finance",
      proposedArguments: { account_id: "acct_redacted", limit: 10 },
      recommendedRoute: "accept",
    });
    expect(event).toEqual({
      tool_name: "get_recent_transactions",
      tool_category: "private_read",
      authorization_state: "authenticated",
      evidence_refs: ["auth.session"],
      risk_domain: "finance",
      proposed_arguments: { account_id: "acct_redacted", limit: 10 },
      recommended_route: "accept",
    });
    expect(shouldExecuteTool(checkToolPrecheck(event))).toBe(true);
  });

  it("maps the optional compatibility fields to snake_case only when given", () => {
    const event = toolPrecheckEvent({
      toolName: "send_email",
      toolCategory: "write",
      authorizationState: "confirmed",
      evidenceRefs: ["approval:9"],
      riskDomain: "customer_support",
      proposedArguments: { to: "c@example.com" },
      recommendedRoute: "accept",
      schemaVersion: "aana.agent_tool_precheck.v1",
      requestId: "req-1",
      agentId: "agent-1",
      userIntent: "reply to the customer",
      authorizationSubject: { subject_type: "user", subject_ref: "u_redacted" },
    });
    expect(event).toMatchObject({
      schema_version: "aana.agent_tool_precheck.v1",
      request_id: "req-1",
      agent_id: "agent-1",
      user_intent: "reply to the customer",
      authorization_subject: { subject_type: "user", subject_ref: "u_redacted" },
    });
    expect(checkToolPrecheck(event).validation_errors).toEqual([]);
  });
});
