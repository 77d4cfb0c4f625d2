/**
 * A test executor built from the same core parts the replay driver wires (policy source + session source in
 * one pipeline, a fresh session per trace), for testing the explorer without the CLI.
 */
import { createHash } from "node:crypto";
import {
  createPipeline,
  createSession,
  parsePolicy,
  policySource,
  sessionSource,
  type Policy,
  type StepDecision,
  type VerifyExecutor,
  type VerifyTraceEvent,
} from "../../src/index.js";

export const NOW = new Date("2026-01-15T12:00:00Z");
const KEY = new Uint8Array(createHash("sha256").update("test").digest());

/** Parses a policy written in a test, or throws. */
export function policyOf(text: string): Policy {
  const parsed = parsePolicy(text);
  if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join("; "));
  return parsed.value;
}

/**
 * Replays each trace in a fresh session, recording executed calls and their results, as `acp replay` does
 * (`approveAsks`: asked and deferred calls execute too, as with `acp replay --approve-asks`).
 */
export function coreExecutor(policy: Policy, intent: unknown, settings: unknown, approveAsks = false): VerifyExecutor {
  return {
    async run(events: readonly VerifyTraceEvent[]): Promise<readonly StepDecision[]> {
      let counter = 0;
      const session = createSession({
        now: () => NOW,
        random: (n) => new Uint8Array(n).fill(counter++ % 256),
        authorityKey: KEY,
        settings,
      });
      session.setIntent(intent);
      session.start();
      const pipeline = createPipeline([policySource(policy), sessionSource(session)], { classify: policy.classify });
      const out: StepDecision[] = [];
      let executed = false;
      for (const event of events) {
        if (event.type === "user_input") session.recordUserInput(event.text);
        else if (event.type === "tool_result") {
          if (executed) session.recordToolResult(event.server, event.tool, event.content);
        } else {
          const request = { server: event.server, tool: event.tool, arguments: event.args };
          const decision = await pipeline.decide(request, NOW);
          executed = decision.route === "accept" || (approveAsks && decision.route !== "refuse");
          if (executed) session.recordExecution(request);
          out.push({ route: decision.route, reasons: decision.reasons });
        }
      }
      return out;
    },
  };
}
