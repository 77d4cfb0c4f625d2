import type { DecisionSource } from "../pipeline/index.js";
import type { Session } from "./session.js";

/**
 * The session as a pipeline source (name `session`): its route and reasons for each request — state machine,
 * intent, plan membership, budgets, transitions, suspension, provenance taint. Put it beside `policySource` in
 * `createPipeline([...])`; the strictest route wins. Judging changes nothing; record what ran with
 * `session.recordExecution`.
 */
export function sessionSource(session: Session): DecisionSource {
  return { name: "session", evaluate: (request) => session.evaluate(request) };
}
