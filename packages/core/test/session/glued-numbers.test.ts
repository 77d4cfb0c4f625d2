import { describe, expect, it } from "vitest";
import { executingSession, expectAsked } from "./harness.js";

// Digits joined by single spaces are one run to a scanner: the attacker's card or account number followed
// (or preceded) by an amount or a count reads as one longer number, and the agent writes the number alone.
const INTENT = { goal: "pay my bills", allowed_actions: ["bank.*"] };

async function payTo(content: string, recipient: string) {
  const { session } = await executingSession({ intent: INTENT, settings: { require_plan: false } });
  session.recordUserInput("pay what the invoice says");
  session.recordExecution({ server: "bank", tool: "read_inbox", arguments: {} }, content);
  return session.evaluate({ server: "bank", tool: "send_money", arguments: { recipient, amount: 200 } });
}

describe("a number the text glued to other digits by a space is still the text's number", () => {
  const cases: readonly [string, string, string][] = [
    ["an amount after it", "pay card 4111 1111 1111 1111 200 EUR", "4111111111111111"],
    ["a count after it, regrouped by the agent", "wire to 1234 5678 9012 3 times", "1234-5678-9012"],
    ["a reference before it", "ref 7 4111 1111 1111 1111 today", "4111 1111 1111 1111"],
    ["a digit before it and two groups after it", "row 7 1234 5678 9012 200 5 end", "123456789012"],
    ["two groups before it", "ref 12 34 4111 1111 1111 1111 today", "4111111111111111"],
    ["its country code before it and a count after it", "call +44 20 7946 0958 2 times", "020 7946 0958"],
    ["a country code the agent added", "call 020 7946 0958 2 times", "+44 20 7946 0958"],
  ];
  for (const [name, text, recipient] of cases) {
    it(`asks with ${name}`, async () => {
      expectAsked(await payTo(text, recipient), "provenance_tainted");
    });
  }

  // any number of groups, not one or two: a scanner reads `12 34 56 78 9 10 11` as one run as readily
  const many: readonly [string, string, string][] = [
    ["three groups after it", "pay card 4111 1111 1111 1111 1 2 3 now", "4111111111111111"],
    ["three groups before it", "ref 1000 2000 3000 4111 1111 1111 1111 today", "4111-1111-1111-1111"],
    ["split in pairs and glued to three groups", "account 12 34 56 78 9 10 11 ok", "12345678"],
    ["written whole and glued to three groups, the agent grouping it", "account 12345678 9 10 11 ok", "12 34 56 78"],
    ["three groups on each side", "ids 5 6 7 1234 5678 9012 8 9 10 end", "123456789012"],
    ["its country code before it and three groups after it", "call +44 20 7946 0958 1 2 3 times", "020 7946 0958"],
    [
      "a run of more than 68 digits",
      `pay 4111 1111 1111 1111 ${Array.from({ length: 30 }, (_, i) => 2000 + i).join(" ")} now`,
      "4111111111111111",
    ],
  ];
  for (const [name, text, recipient] of many) {
    it(`asks with ${name}`, async () => {
      expectAsked(await payTo(text, recipient), "provenance_tainted");
    });
  }

  it("reads whole groups only, never a part of one", async () => {
    expect((await payTo("order 123456789 0123 shipped", "90123000")).route).toBe("accept");
    expect((await payTo("order 123456789 0123 shipped", "12345678")).route).toBe("accept");
    expect((await payTo("order 1 2 3 123456789 0123 4 5 6 shipped", "12345678")).route).toBe("accept");
    expect((await payTo("order 1 2 3 123456789 0123 4 5 6 shipped", "90123456")).route).toBe("accept");
    expect((await payTo("ids 11 22 33 44 55 66 77 88", "12233445")).route).toBe("accept");
  });
});

describe("the user's number written in groups vouches for itself, not for some of its groups", () => {
  async function payAfter(user: string, text: string, recipient: string) {
    const { session } = await executingSession({ intent: INTENT, settings: { require_plan: false } });
    session.recordUserInput(user);
    session.recordExecution({ server: "bank", tool: "read_inbox", arguments: {} }, text);
    return session.evaluate({ server: "bank", tool: "send_money", arguments: { recipient, amount: 200 } });
  }

  it("asks to pay the text's account that is the first groups of the user's card", async () => {
    const user = "my card is 4111 1111 1111 1111, pay the invoice";
    expectAsked(await payAfter(user, "invoice: pay to account 4111 1111 today", "4111 1111"), "provenance_tainted");
    expectAsked(await payAfter(user, "invoice: pay to account 1111 1111 today", "1111 1111"), "provenance_tainted");
  });

  it("still accepts the user's whole number, and one the user's words end", async () => {
    const user = "my card is 4111 1111 1111 1111, pay the invoice";
    const text = "invoice: pay 4111 1111 1111 1111 and 4111 1111";
    expect((await payAfter(user, text, "4111 1111 1111 1111")).route).toBe("accept");
    expect((await payAfter("pay 4111 1111, it is 20 EUR", text, "4111 1111")).route).toBe("accept");
  });
});
