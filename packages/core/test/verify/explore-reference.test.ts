import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  brokenInvariants,
  buildVerifyModel,
  exploreModel,
  initialEvents,
  type InvariantId,
  type VerifyExecutor,
  type VerifyModel,
  type VerifyTraceEvent,
} from "../../src/index.js";
import { coreExecutor, policyOf } from "./core-executor.js";

interface Config {
  readonly sendRule: "allow" | "ask";
  readonly transition: boolean;
  readonly untrackedTo: boolean;
  readonly sendIsRead: boolean;
  readonly approveAsks: boolean;
}

function configure(c: Config): { policy: string; settings: Record<string, unknown> } {
  const classify = c.sendIsRead ? "classify:\n  - { tool: send_email, category: read }\n" : "";
  const policy = `version: "1"\ndefault_action: ask\nrules:\n  - { match: { category: read }, action: allow }\n  - { match: { tool: send_email }, action: ${c.sendRule} }\n${classify}`;
  const settings: Record<string, unknown> = { require_plan: false };
  if (c.transition) settings["transitions"] = ["read -> communication: ask"];
  if (c.untrackedTo) settings["provenance"] = { untracked_arguments: ["to"] };
  return { policy, settings };
}

const INTENT = { goal: "read mail and answer it", allowed_actions: ["mail.search_emails", "mail.send_email"] };

/**
 * The naive reference: every sequence of calls up to `depth`, no state merging, each call judged by replaying
 * its whole session; returns the invariants some call breaks.
 */
async function naiveBroken(
  model: VerifyModel,
  executor: VerifyExecutor,
  depth: number,
  approveAsks: boolean,
): Promise<Set<InvariantId>> {
  const broken = new Set<InvariantId>();
  const walk = async (events: VerifyTraceEvent[], read: string | null, left: number): Promise<void> => {
    if (left === 0) return;
    for (const action of model.actions) {
      for (const value of model.values) {
        if (value.cls === "external_untrusted" && read === null) continue;
        const args =
          value.value === null ? {} : Object.fromEntries(model.argumentKeys.map((k) => [k, value.value as string]));
        const call: VerifyTraceEvent = { type: "tool_call", server: action.server, tool: action.tool, args };
        const decisions = await executor.run([...events, call]);
        const decision = decisions[decisions.length - 1];
        if (decision === undefined) throw new Error("no decision");
        for (const b of brokenInvariants({ action, value, decision, untrustedRead: read })) broken.add(b.id);
        const runs = decision.route === "accept" || (approveAsks && decision.route !== "refuse");
        const contents = runs && action.untrustedRead ? model.untrustedContents : [model.trustedContent];
        for (const content of contents) {
          const result: VerifyTraceEvent = { type: "tool_result", server: action.server, tool: action.tool, content };
          const nextRead = read ?? (runs && action.untrustedRead ? action.name : null);
          await walk([...events, call, result], nextRead, left - 1);
        }
      }
    }
  };
  await walk(initialEvents(model), null, depth);
  return broken;
}

describe("exploreModel against a naive reference without state merging", () => {
  it("breaks exactly the invariants some bounded session breaks", async () => {
    const config = fc.record({
      sendRule: fc.constantFrom("allow" as const, "ask" as const),
      transition: fc.boolean(),
      untrackedTo: fc.boolean(),
      sendIsRead: fc.boolean(),
      approveAsks: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(config, async (c) => {
        const { policy: text, settings } = configure(c);
        const policy = policyOf(text);
        const built = buildVerifyModel({ policy, intent: INTENT, settings });
        if (!built.ok) throw new Error("bad model");
        const executor = coreExecutor(policy, INTENT, settings, c.approveAsks);
        const report = await exploreModel(built.value.model, executor, {
          depth: 2,
          maxStates: 10_000,
          approveAsks: c.approveAsks,
        });
        const reference = await naiveBroken(built.value.model, executor, 2, c.approveAsks);
        expect(new Set(report.violations.map((v) => v.invariant))).toEqual(reference);
        expect(report.outcome).toBe(reference.size === 0 ? "verified" : "violated");
      }),
      { numRuns: 12, seed: 20261122 },
    );
  }, 120_000);
});
