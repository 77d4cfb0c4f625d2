import { describe, expect, it } from "vitest";
import {
  buildVerifyModel,
  createTokenProbe,
  exploreModel,
  MODEL_VALUES,
  type BuiltModel,
  type Policy,
  type VerifyExecutor,
} from "../../src/index.js";
import { coreExecutor, NOW, policyOf } from "./core-executor.js";

const POLICY = policyOf(`
version: "1"
default_action: ask
rules:
  - { id: reads, match: { category: read }, action: allow }
  - { id: mail, match: { tool: send_email }, action: allow }
`);
const INTENT = {
  goal: "Check my calendar and email a summary to bob@mycompany.example",
  allowed_actions: ["calendar.read_events", "mail.send_email"],
  trusted_values: { recipients: ["bob@mycompany.example"] },
};
const GUARDED = { require_plan: false, transitions: ["read -> communication: ask"] };
const UNGUARDED = { require_plan: false };

function build(policy: Policy, intent: unknown, settings: unknown): BuiltModel {
  const built = buildVerifyModel({ policy, intent, settings });
  if (!built.ok) throw new Error(built.issues.map((i) => i.message).join("; "));
  return built.value;
}

describe("exploreModel", () => {
  it("verifies a policy whose session settings put a person before any send that follows a read", async () => {
    const built = build(POLICY, INTENT, GUARDED);
    const report = await exploreModel(built.model, coreExecutor(POLICY, INTENT, GUARDED), {
      depth: 3,
      maxStates: 1000,
    });
    expect(report.outcome).toBe("verified");
    expect(report.violations).toEqual([]);
    expect(report.states).toBeGreaterThan(3);
    expect(report.calls).toBeGreaterThan(report.states);
  });

  it("finds the shortest read-then-send path when nothing guards a send after a read", async () => {
    const built = build(POLICY, INTENT, UNGUARDED);
    const report = await exploreModel(built.model, coreExecutor(POLICY, INTENT, UNGUARDED), {
      depth: 3,
      maxStates: 1000,
    });
    expect(report.outcome).toBe("violated");
    expect(report.violations.map((v) => v.invariant)).toEqual(["untrusted_read_then_send"]);
    const cex = report.violations[0];
    expect(cex?.route).toBe("accept");
    expect(cex?.events.map((e) => e.type)).toEqual(["user_input", "tool_call", "tool_result", "tool_call"]);
    expect(cex?.events[1]).toMatchObject({ server: "calendar", tool: "read_events" });
    expect(cex?.events[3]).toMatchObject({ server: "mail", tool: "send_email" });
  });

  it("offers an untrusted value only after untrusted content was read, and sees it tainted", async () => {
    const settings = { require_plan: false, provenance: { untracked_arguments: ["to"] } };
    const built = build(POLICY, INTENT, settings);
    const report = await exploreModel(built.model, coreExecutor(POLICY, INTENT, settings), {
      depth: 2,
      maxStates: 1000,
    });
    const taint = report.violations.find((v) => v.invariant === "untrusted_to_consequential");
    expect(taint?.events[3]).toMatchObject({ tool: "send_email", args: { to: MODEL_VALUES.untrusted } });
    expect(taint?.events.slice(0, 3).some((e) => e.type === "tool_result")).toBe(true);
  });

  it("reports an action outside the intent that a (broken) decision path does not refuse", async () => {
    const built = build(POLICY, INTENT, GUARDED);
    const acceptAll: VerifyExecutor = {
      run: (events) =>
        Promise.resolve(
          events.filter((e) => e.type === "tool_call").map(() => ({ route: "accept" as const, reasons: [] })),
        ),
    };
    const report = await exploreModel(built.model, acceptAll, { depth: 1, maxStates: 100 });
    const outside = report.violations.find((v) => v.invariant === "outside_intent_executed");
    expect(outside?.events[1]).toMatchObject({ server: "other", tool: "other_tool" });
  });

  it("reports a token accepted twice when the gate lets a second use through", async () => {
    const built = build(POLICY, INTENT, GUARDED);
    const real = coreExecutor(POLICY, INTENT, GUARDED);
    const leaky: VerifyExecutor = {
      run: (events) => real.run(events),
      probeToken: () => ({ firstUse: true, secondUse: true, detail: "the second use was authorized" }),
    };
    const report = await exploreModel(built.model, leaky, { depth: 1, maxStates: 100 });
    expect(report.violations.map((v) => v.invariant)).toContain("token_reused");
  });

  it("keeps the token invariant with the real token gate", async () => {
    const built = build(POLICY, INTENT, GUARDED);
    const executor: VerifyExecutor = {
      ...coreExecutor(POLICY, INTENT, GUARDED),
      probeToken: createTokenProbe({ intent: INTENT, settings: GUARDED, now: NOW }),
    };
    const report = await exploreModel(built.model, executor, { depth: 2, maxStates: 1000 });
    expect(report.outcome).toBe("verified");
  });

  it("stops unfinished, never verified, when the states exceed the bound", async () => {
    const built = build(POLICY, INTENT, GUARDED);
    const report = await exploreModel(built.model, coreExecutor(POLICY, INTENT, GUARDED), { depth: 4, maxStates: 2 });
    expect(report.outcome).toBe("too_large");
    expect(report.states).toBeGreaterThan(2);
  });
});
