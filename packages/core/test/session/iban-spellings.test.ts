import { describe, expect, it } from "vitest";
import { extractValueTokens } from "../../src/index.js";
import { executingSession, expectAsked } from "./harness.js";

const INTENT = { goal: "pay my bills", allowed_actions: ["bank.*"] };
const IBAN = "DE89370400440532013000";

describe("an IBAN is the same IBAN however it is written", () => {
  it.each([
    ["lower case", "de89 3704 0044 0532 0130 00"],
    ["dashes", "DE89-3704-0044-0532-0130-00"],
    ["dots", "DE89.3704.0044.0532.0130.00"],
  ])("asks when the result wrote it in %s and the agent sends it plain", async (_, written) => {
    const { session } = await executingSession({ intent: INTENT, settings: { require_plan: false } });
    session.recordExecution({ server: "bank", tool: "read_inbox", arguments: {} }, `new account: ${written}`);
    const verdict = session.evaluate({
      server: "bank",
      tool: "send_money",
      arguments: { recipient: IBAN, amount: 10 },
    });
    expectAsked(verdict, "provenance_tainted");
  });

  it("finds no IBAN in prose", () => {
    expect(extractValueTokens("meet me at10 and then we go shopping for apples").map((t) => t.kind)).not.toContain(
      "iban",
    );
    expect(extractValueTokens(`pay ${IBAN} now`)).toContainEqual({ kind: "iban", value: IBAN });
    expect(extractValueTokens("licence AB12-CDEF-GHIJ-KLMN").map((t) => t.kind)).not.toContain("iban");
  });
});
