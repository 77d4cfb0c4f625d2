import { describe, expect, it } from "vitest";
import { createPipeline, validateActionRequest, type DecisionSource } from "../../src/index.js";

/**
 * JSON text `1234567890123456789` (a snowflake id) parses as 1234567890123456768: the decision (and the
 * audit, and what `acp proxy` forwards) would be about another number than the one sent. Every number beyond
 * ±2^53−1 is refused (`unsafe_integer`) with the argument it is in named; the caller sends it as a string.
 */
const NOW = new Date("2026-03-02T10:00:00Z");
const accept: DecisionSource = {
  name: "policy",
  evaluate: () => ({ source: "policy", route: "accept", reasons: [] }),
};

describe("pipeline: numbers too large to carry exactly", () => {
  it("refuses a snowflake id parsed from JSON text, naming the argument and saying to send a string", async () => {
    const request: unknown = JSON.parse('{"tool":"delete_message","arguments":{"id":1234567890123456789}}');
    const decision = await createPipeline([accept]).decide(request, NOW);
    expect(decision.route).toBe("refuse");
    expect(decision.reasons).toHaveLength(1);
    expect(decision.reasons[0]?.code).toBe("unsafe_integer");
    expect(decision.reasons[0]?.message).toMatch(/^invalid request: arguments\.id: a number beyond ±9007199254740991 /);
    expect(decision.reasons[0]?.message).toContain("send it as a string");
  });

  it("names the first such number however deep, in arrays too, and negative ones", async () => {
    const pipeline = createPipeline([accept]);
    const cases: [unknown, string][] = [
      [{ ok: 1, ids: [1, -9007199254740992] }, "arguments.ids.1: "],
      [{ where: { filter: { after: 2 ** 60 } } }, "arguments.where.filter.after: "],
      [{ big: 1e20 }, "arguments.big: "],
      // every double beyond 2^53 is an integer: a float that large is refused as well (documented)
      [{ huge: 1.5e300 }, "arguments.huge: "],
    ];
    for (const [args, where] of cases) {
      const decision = await pipeline.decide({ tool: "x", arguments: args }, NOW);
      expect(decision.route, where).toBe("refuse");
      expect(decision.reasons[0]?.code).toBe("unsafe_integer");
      expect(decision.reasons[0]?.message).toContain(where);
    }
  });

  it("accepts every number JavaScript carries exactly, at the edges too, and ordinary floats", async () => {
    const pipeline = createPipeline([accept]);
    for (const n of [0, -1, 1.5, 1e-300, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 4503599627370495.5]) {
      const decision = await pipeline.decide({ tool: "x", arguments: { n, s: "1234567890123456789" } }, NOW);
      expect(decision.route, String(n)).toBe("accept");
    }
  });

  it("with another problem in the request, the code is invalid_request and both are said", () => {
    const checked = validateActionRequest({ tool: "", arguments: { id: 2 ** 53 } });
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.issues.map((i) => i.code).sort()).toEqual(["invalid_request", "unsafe_integer"]);
    expect(checked.issues.find((i) => i.code === "unsafe_integer")?.path).toEqual(["arguments", "id"]);
  });
});
