import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshHome, startServe } from "./serve-fixture.js";

/**
 * A caller not written in JavaScript posts `{"id": 1234567890123456789}` (a snowflake id) and runs its own,
 * exact id when the answer is accept. `acp serve` read it as 1234567890123456768 and decided and recorded
 * an action on another object than the one run. Now such a request is refused (`unsafe_integer`, naming
 * the argument) and recorded as every refusal; the id sent as a string is decided as usual.
 */
describe("acp serve: POST /v1/decide with an integer JavaScript cannot carry exactly", () => {
  it("refuses it naming the argument, records the refusal, and decides the id sent as a string", async () => {
    const home = freshHome();
    const serve = startServe(home, ["--port", "0"]);
    const { url } = await serve.ready;
    const decide = async (body: string) => {
      const res = await fetch(`${url}/v1/decide`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { route: string; decision: { reasons: { code: string; message: string }[] } };
    };
    try {
      // the starter policy allows reads: only the number can refuse this
      const big = await decide('{"tool":"read_file","arguments":{"path":"/tmp/a","id":1234567890123456789}}');
      expect(big.route).toBe("refuse");
      expect(big.decision.reasons.map((r) => r.code)).toEqual(["unsafe_integer"]);
      expect(big.decision.reasons[0]?.message).toMatch(
        /arguments\.id: a number beyond ±9007199254740991 .*send it as a string/,
      );
      const asString = await decide('{"tool":"read_file","arguments":{"path":"/tmp/a","id":"1234567890123456789"}}');
      expect(asString.route).toBe("accept");
    } finally {
      serve.stop();
      await serve.done; // closing flushes the chain
    }
    const decided = readFileSync(join(home, "audit.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { event_type: string; decision: string | null; metadata: unknown })
      .filter((e) => e.event_type === "policy_evaluated");
    expect(decided.map((e) => e.decision)).toEqual(["refuse", "accept"]);
    expect(JSON.stringify(decided[0]?.metadata)).toContain("unsafe_integer");
  });
});
