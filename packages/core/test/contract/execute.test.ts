import { describe, expect, it } from "vitest";
import { checkToolPrecheck, shouldExecuteTool } from "../../src/contract/index.js";
import { DOC } from "./fixtures.js";

const passing = (): Record<string, unknown> =>
  JSON.parse(JSON.stringify(checkToolPrecheck(DOC.publicRead))) as Record<string, unknown>;

function tampered(change: (envelope: Record<string, unknown>) => void): Record<string, unknown> {
  const envelope = passing();
  change(envelope);
  return envelope;
}

describe("shouldExecuteTool", () => {
  it("executes a passing envelope, also after a JSON round trip", () => {
    expect(shouldExecuteTool(checkToolPrecheck(DOC.publicRead))).toBe(true);
    expect(shouldExecuteTool(passing())).toBe(true);
  });

  it.each([
    ["ask", DOC.writeMissingConfirmation],
    ["defer", DOC.privateReadMissingAuth],
    ["refuse", DOC.unknownDestructive],
  ] as const)("does not execute a %s envelope", (_route, event) => {
    expect(shouldExecuteTool(checkToolPrecheck(event))).toBe(false);
  });

  const tamperings: [string, (e: Record<string, unknown>) => void][] = [
    ["gate_decision fail", (e) => (e["gate_decision"] = "fail")],
    ["gate_decision PASS", (e) => (e["gate_decision"] = "PASS")],
    ["gate_decision missing", (e) => delete e["gate_decision"]],
    ["gate_decision true", (e) => (e["gate_decision"] = true)],
    ["recommended_action ask", (e) => (e["recommended_action"] = "ask")],
    ["recommended_action missing", (e) => delete e["recommended_action"]],
    ["architecture_decision missing", (e) => delete e["architecture_decision"]],
    ["architecture_decision null", (e) => (e["architecture_decision"] = null)],
    ["architecture_decision a string", (e) => (e["architecture_decision"] = "accept")],
    ["architecture_decision an array", (e) => (e["architecture_decision"] = ["accept"])],
    [
      "architecture_decision.route defer",
      (e) => ((e["architecture_decision"] as Record<string, unknown>)["route"] = "defer"),
    ],
    [
      "architecture_decision.route missing",
      (e) => delete (e["architecture_decision"] as Record<string, unknown>)["route"],
    ],
    ["hard_blockers non-empty", (e) => (e["hard_blockers"] = ["x"])],
    ["hard_blockers missing", (e) => delete e["hard_blockers"]],
    ["hard_blockers a string", (e) => (e["hard_blockers"] = "")],
    ["hard_blockers an object", (e) => (e["hard_blockers"] = { length: 0 })],
    ["aix missing", (e) => delete e["aix"]],
    ["aix.hard_blockers non-empty", (e) => ((e["aix"] as Record<string, unknown>)["hard_blockers"] = ["x"])],
    ["aix.hard_blockers missing", (e) => ((e["aix"] as Record<string, unknown>)["hard_blockers"] = undefined)],
    ["validation_errors non-empty", (e) => (e["validation_errors"] = [{ code: "x" }])],
    ["validation_errors missing", (e) => delete e["validation_errors"]],
    ["validation_errors null", (e) => (e["validation_errors"] = null)],
  ];

  it.each(tamperings)("does not execute when %s", (_name, change) => {
    expect(shouldExecuteTool(tampered(change))).toBe(false);
  });

  it.each([null, undefined, "accept", 1, true, [], [passing()]])("does not execute %j", (value) => {
    expect(shouldExecuteTool(value)).toBe(false);
  });

  it("does not execute, and does not throw, when a field's getter throws", () => {
    const envelope = passing();
    Object.defineProperty(envelope, "hard_blockers", {
      get() {
        throw new Error("boom");
      },
    });
    expect(shouldExecuteTool(envelope)).toBe(false);
  });

  it("does not execute a proxy that throws on every read", () => {
    const hostile = new Proxy(passing(), {
      get() {
        throw new Error("trap");
      },
    });
    expect(shouldExecuteTool(hostile)).toBe(false);
  });
});
