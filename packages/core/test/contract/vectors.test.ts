import { describe, expect, it } from "vitest";
import { checkToolPrecheck, shouldExecuteTool } from "../../src/contract/index.js";
import { readRepoJson } from "./fixtures.js";

interface Vector {
  name: string;
  source: "document" | "acp";
  event: unknown;
  expected: { valid: boolean; route: string; inferred_route: string; gate_decision: string; hard_blockers: string[] };
}

const { vectors } = readRepoJson("spec/vectors/agent-action-contract-v1.json") as { vectors: Vector[] };

describe("spec/vectors/agent-action-contract-v1.json", () => {
  it("holds the document's four examples with their expected routes", () => {
    const documented = vectors.filter((v) => v.source === "document").map((v) => [v.name, v.expected.route]);
    expect(documented).toEqual(
      expect.arrayContaining([
        ["document example: public read accepts", "accept"],
        ["document example: write missing confirmation asks", "ask"],
        ["document example: private read missing auth defers", "defer"],
        ["document example: unknown destructive tool refuses", "refuse"],
      ]),
    );
  });

  it.each(vectors.map((v) => [v.name, v] as const))("%s", (_name, vector) => {
    const envelope = checkToolPrecheck(vector.event);
    expect(envelope.recommended_action).toBe(vector.expected.route);
    expect(envelope.architecture_decision.route).toBe(vector.expected.route);
    expect(envelope.architecture_decision.inferred_route).toBe(vector.expected.inferred_route);
    expect(envelope.gate_decision).toBe(vector.expected.gate_decision);
    expect([...envelope.hard_blockers].sort()).toEqual(vector.expected.hard_blockers);
    expect(envelope.aix.hard_blockers).toEqual(envelope.hard_blockers);
    expect(envelope.validation_errors.length === 0).toBe(vector.expected.valid);
    expect(envelope.audit.event_valid).toBe(vector.expected.valid);
    expect(shouldExecuteTool(envelope)).toBe(vector.expected.route === "accept");
  });
});
