import { pipelineRefusal, type Decision, type Reason } from "@acp/core";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { refusalText, toolError } from "./tool-error.js";
import type { AuditSink, ExecutionAdmission } from "./types.js";

/**
 * Thrown by an {@link ExecutionAdmission} when the session will not let a call the gate let through run: a
 * call in flight beside it spent the budget, tripped the kill switch or suspended the session meanwhile.
 * `reasons` are the session's own (`budget_exhausted`, `session_suspended`, …).
 */
export class ExecutionRefused extends Error {
  override readonly name = "ExecutionRefused";
  readonly reasons: readonly Reason[];

  constructor(reasons: readonly Reason[]) {
    super(reasons.map((r) => r.message).join("; "));
    this.reasons = reasons;
  }
}

/** The call may run (`call`: the session's `seq` for it, which its result names), or is refused here. */
export type Admitted =
  | { readonly kind: "run"; readonly call?: number }
  | { readonly kind: "refused"; readonly result: CallToolResult; readonly decision: Decision };

/**
 * Tells the session runtime that a call the gate let through is about to run — after the decision (and any
 * person's approval), before it is forwarded — so calls of one session in flight together are counted
 * together: each is judged against the budgets and the kill switch with the others counted, and one that no
 * longer fits is refused here, never run. A refusal is audited (`tool_call_refused`, with the session's
 * reasons) and answered with a tool error naming the session (`refused by the session: …`); any other error
 * of the runtime refuses too (fail closed: a call the session could not count does not run).
 */
export async function admitExecution(
  admit: ExecutionAdmission | undefined,
  audit: AuditSink,
  sessionId: string,
  request: Parameters<ExecutionAdmission>[1],
  fields: Record<string, unknown>,
): Promise<Admitted> {
  if (admit === undefined) return { kind: "run" };
  let call: number | undefined;
  try {
    call = admit(sessionId, request);
  } catch (err) {
    const decision = refusalOf(err, fields);
    await audit.record("tool_call_refused", {
      ...fields,
      decision: "refuse",
      reasons: decision.reasons,
    });
    return { kind: "refused", result: toolError(refusalText(decision), decision), decision };
  }
  return call === undefined ? { kind: "run" } : { kind: "run", call };
}

/** The decision a call is refused under at admission: the session's reasons, or the pipeline's for any other error. */
function refusalOf(err: unknown, fields: Record<string, unknown>): Decision {
  if (!(err instanceof ExecutionRefused) || err.reasons.length === 0) {
    const message = `the session runtime could not count the call, so it does not run: ${err instanceof Error ? err.message : String(err)}`;
    return pipelineRefusal("execution_uncounted", message);
  }
  const { reasons } = err;
  return {
    route: "refuse",
    action: "deny",
    rule: null,
    category: typeof fields["category"] === "string" ? (fields["category"] as Decision["category"]) : "system",
    risk_level:
      typeof fields["risk_level"] === "string" ? (fields["risk_level"] as Decision["risk_level"]) : "critical",
    reasons,
    verdicts: [{ source: "session", route: "refuse", reasons }],
  };
}
