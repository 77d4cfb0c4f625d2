import { describe, expect, it } from "vitest";
import { evaluateActionContract } from "../../src/contract/index.js";
import { DOC } from "./fixtures.js";

describe("evaluateActionContract (pipeline source)", () => {
  it("accepts what may execute, naming the deciding table cell", () => {
    expect(evaluateActionContract(DOC.publicRead)).toEqual({
      source: "contract",
      route: "accept",
      rule: "public_read.none",
      reasons: [
        {
          source: "contract",
          code: "public_read_allowed",
          message: "a public read may run without identity authorization",
        },
      ],
    });
  });

  it("carries every hard blocker as a reason in plain words", () => {
    const verdict = evaluateActionContract(DOC.privateReadMissingAuth);
    expect(verdict.route).toBe("defer");
    expect(verdict.rule).toBe("private_read.none");
    expect(verdict.reasons.map((r) => r.code)).toEqual([
      "missing_authorization_for_private_read",
      "insufficient_evidence",
    ]);
    expect(verdict.reasons[0]?.message).toBe(
      "a private read needs at least `authenticated` authorization, the event has `none`",
    );
  });

  it("refuses an invalid event without a rule", () => {
    const verdict = evaluateActionContract({ tool_name: "x" });
    expect(verdict.route).toBe("refuse");
    expect(verdict.rule).toBeUndefined();
    expect(verdict.reasons[0]?.code).toBe("schema_invalid");
  });

  it("refuses a missing contract rather than ignoring it", () => {
    expect(evaluateActionContract(undefined).route).toBe("refuse");
  });
});
