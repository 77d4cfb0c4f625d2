import { describe, expect, it } from "vitest";
import { createSession, isSessionError, validateIntent, type Confirmation } from "../../src/index.js";
import { baseOptions, DAY_INTENT, executingSession, recordingHandler } from "./harness.js";

const SEND = { server: "email", tool: "send", arguments: { to: "team@example.com", body: "agenda" } };

describe("intent validation", () => {
  it("fills defaults and returns a deep-frozen private copy", () => {
    const input = { goal: "g", allowed_actions: ["a.b"], trusted_values: { recipients: ["x@y.example"] } };
    const result = validateIntent(input);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toMatchObject({ version: 1, forbidden_actions: [], confirm_actions: [], budgets: {} });
    expect(Object.isFrozen(result.value)).toBe(true);
    expect(Object.isFrozen(result.value.trusted_values["recipients"])).toBe(true);
    input.trusted_values.recipients.push("attacker@evil.example");
    expect(result.value.trusted_values["recipients"]).toEqual(["x@y.example"]);
  });

  const BAD: [string, unknown, string][] = [
    ["not an object", "prepare my day", "intent_schema_violation"],
    ["no goal", { allowed_actions: [] }, "intent_schema_violation"],
    ["unknown field", { goal: "g", allowed_actions: [], allowed: ["x"] }, "intent_schema_violation"],
    ["actions not strings", { goal: "g", allowed_actions: [1] }, "intent_schema_violation"],
    ["bad glob", { goal: "g", allowed_actions: ["[abc"] }, "invalid_action_pattern"],
    ["bad budget", { goal: "g", allowed_actions: [], budgets: { max_calls: -1 } }, "intent_schema_violation"],
    [
      "bad list name",
      { goal: "g", allowed_actions: [], trusted_values: { "Bad Name": [] } },
      "intent_schema_violation",
    ],
    ["a function", { goal: "g", allowed_actions: [], f: () => 1 }, "not_plain_json"],
    ["non-finite number", { goal: "g", allowed_actions: [], version: Infinity }, "not_plain_json"],
    ["oversized goal", { goal: "x".repeat(5000), allowed_actions: [] }, "intent_schema_violation"],
  ];
  for (const [name, value, code] of BAD) {
    it(`refuses a malformed intent (${name}) with \`${code}\``, () => {
      const result = validateIntent(value);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.issues.map((i) => i.code)).toContain(code);
    });
  }

  it("names the unknown field in a house-style message", () => {
    const result = validateIntent({ goal: "g", allowed_actions: [], allowd: [] });
    expect(!result.ok && result.issues[0]?.message).toBe("intent: unknown field `allowd`");
  });

  it("refuses a malformed intent in setIntent and changes nothing", () => {
    const session = createSession(baseOptions());
    expect(() => session.setIntent({ goal: 3 })).toThrow(expect.objectContaining({ code: "invalid_intent" }) as Error);
    expect(session.state).toBe("created");
    expect(session.intent).toBeNull();
    expect(session.events.at(-1)?.code).toBe("invalid_intent");
  });
});

describe("gap: the intent is immutable, versioned, and an update revokes every token", () => {
  it("cannot be changed in place (deep-frozen) nor by changing the caller's object", () => {
    const input = structuredClone(DAY_INTENT);
    const session = createSession(baseOptions());
    const intent = session.setIntent(input);
    input.allowed_actions.push("bank.transfer");
    expect(session.intent?.allowed_actions).not.toContain("bank.transfer");
    expect(() => (intent.allowed_actions as string[]).push("bank.transfer")).toThrow(TypeError);
    expect(() => Object.assign(intent, { goal: "x" })).toThrow(TypeError);
    expect(session.intent).toBe(intent);
  });

  it("updates only with a confirmation from the escalation handler, to version 2, revoking tokens issued under version 1", async () => {
    const handler = recordingHandler(true);
    const { session } = await executingSession({ settings: { require_plan: false }, extra: { escalation: handler } });
    const token = session.issueToken(SEND);
    const v2 = await session.confirmIntentUpdate({ ...DAY_INTENT, goal: "also read my inbox" });
    expect(v2.version).toBe(2);
    expect(handler.questions.at(-1)?.kind).toBe("intent_update");
    expect(handler.questions.at(-1)?.text).toContain("also read my inbox");
    expect(session.state).toBe("intent_set");
    session.start();
    expect(session.authorize(token, SEND)).toMatchObject({ ok: false, code: "token_revoked" });
    expect(session.events.some((e) => e.type === "tokens_revoked" && e.message.startsWith("1 authority token"))).toBe(
      true,
    );
  });

  it("stays at the old version when the person declines", async () => {
    const { session } = await executingSession({
      settings: { require_plan: false },
      extra: { escalation: recordingHandler(false) },
    });
    await expect(session.confirmIntentUpdate({ ...DAY_INTENT, goal: "other" })).rejects.toMatchObject({
      code: "confirmation_denied",
    });
    expect(session.intent?.version).toBe(1);
    expect(session.state).toBe("executing");
  });

  it("refuses an update without a handler (every question is declined)", async () => {
    const { now, random, authorityKey } = baseOptions();
    const session = createSession({ now, random, authorityKey, settings: { require_plan: false } });
    session.setIntent(DAY_INTENT);
    session.start();
    await expect(session.confirmIntentUpdate(DAY_INTENT)).rejects.toMatchObject({ code: "confirmation_denied" });
    expect(session.intent?.version).toBe(1);
  });

  it("refuses an update carrying the wrong version", async () => {
    const { session } = await executingSession({ settings: { require_plan: false } });
    await expect(
      session.requestConfirmation({ kind: "intent_update", intent: { ...DAY_INTENT, version: 5 } }),
    ).rejects.toMatchObject({
      code: "intent_version_conflict",
    });
  });

  it("refuses a confirmation given for another intent than the one applied", async () => {
    const { session } = await executingSession({ settings: { require_plan: false } });
    const confirmation = await session.requestConfirmation({
      kind: "intent_update",
      intent: { ...DAY_INTENT, goal: "a" },
    });
    expect(confirmation).not.toBeNull();
    let thrown: unknown;
    try {
      session.updateIntent({ ...DAY_INTENT, goal: "b", allowed_actions: ["*"] }, confirmation as Confirmation);
    } catch (err) {
      thrown = err;
    }
    expect(isSessionError(thrown, "confirmation_invalid")).toBe(true);
    expect(session.intent?.version).toBe(1);
  });

  it("gives the new version's trusted values provenance and drops the old ones", async () => {
    const { session } = await executingSession({ settings: { require_plan: false } });
    await session.confirmIntentUpdate({ ...DAY_INTENT, trusted_values: { recipients: ["new@example.com"] } });
    const sources = session.provenance.map((e) => e.source);
    expect(sources).toContain("intent@v2.trusted_values.recipients");
    expect(sources).not.toContain("intent@v1.trusted_values.recipients");
  });
});
