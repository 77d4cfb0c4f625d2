import { describe, expect, it } from "vitest";
import { checkToolCall, checkToolPrecheck, gateAction, shouldExecuteTool } from "../../src/contract/index.js";
import { canonicalSha256Ref } from "../../src/canonical-json/index.js";
import { DOC, GOOD_REF } from "./fixtures.js";

const SECRET = "hunter2-very-secret-value";

describe("the decision envelope", () => {
  it("has a stable key order", () => {
    expect(Object.keys(checkToolPrecheck(DOC.publicRead))).toEqual([
      "contract",
      "gate_decision",
      "recommended_action",
      "hard_blockers",
      "architecture_decision",
      "aix",
      "validation_errors",
      "audit",
    ]);
  });

  it("passes the document's public read with a reason and no blockers", () => {
    const envelope = checkToolPrecheck(DOC.publicRead);
    expect(envelope).toMatchObject({
      gate_decision: "pass",
      recommended_action: "accept",
      hard_blockers: [],
      aix: { hard_blockers: [] },
      validation_errors: [],
      architecture_decision: {
        route: "accept",
        inferred_route: "accept",
        runtime_route: "accept",
        reasons: [{ code: "public_read_allowed", message: "a public read may run without identity authorization" }],
      },
    });
    expect(shouldExecuteTool(envelope)).toBe(true);
  });

  it("keeps argument values out of the envelope, recording only names and a canonical hash", () => {
    const args = { password: SECRET, nested: { token: SECRET }, to: "customer@example.com" };
    const envelope = checkToolPrecheck({
      ...DOC.writeMissingConfirmation,
      proposed_arguments: args,
      request_id: "req-7",
      agent_id: "agent-1",
      user_intent: `please use ${SECRET}`,
      authorization_subject: { subject_type: "user", subject_ref: SECRET },
    });
    const text = JSON.stringify(envelope);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("customer@example.com");
    expect(envelope.audit).toMatchObject({
      event_valid: true,
      request_id: "req-7",
      agent_id: "agent-1",
      tool_name: "send_email",
      proposed_argument_keys: ["nested", "password", "to"],
      proposed_arguments_hash: canonicalSha256Ref(args),
    });
  });

  it("keeps no more than 64 argument names", () => {
    const args = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${String(i).padStart(3, "0")}`, i]));
    const envelope = checkToolPrecheck({ ...DOC.publicRead, proposed_arguments: args });
    expect(envelope.audit.proposed_argument_keys).toHaveLength(64);
  });

  it("hashes arguments by canonical form, so key order does not matter", () => {
    const a = checkToolPrecheck({ ...DOC.publicRead, proposed_arguments: { a: 1, b: 2 } });
    const b = checkToolPrecheck({ ...DOC.publicRead, proposed_arguments: { b: 2, a: 1 } });
    expect(a.audit.proposed_arguments_hash).toBe(b.audit.proposed_arguments_hash);
  });

  it("summarises evidence as counts", () => {
    const envelope = checkToolPrecheck({
      ...DOC.writeMissingConfirmation,
      evidence_refs: ["s", GOOD_REF, { ...GOOD_REF, freshness: { status: "stale" } }],
    });
    expect(envelope.audit.evidence).toEqual({
      total: 3,
      string_refs: 1,
      structured_refs: 2,
      usable: 2,
      stale: 1,
      unverified: 0,
      sensitive: 0,
      verified_fresh: 1,
    });
  });

  it("refuses an invalid event with validation errors, schema_invalid and no audit labels", () => {
    const envelope = checkToolPrecheck({ ...DOC.publicRead, tool_category: "deleter", recommended_route: "yolo" });
    expect(envelope).toMatchObject({
      gate_decision: "fail",
      recommended_action: "refuse",
      hard_blockers: ["schema_invalid", "unknown_tool_category", "unknown_route"],
      architecture_decision: { route: "refuse", inferred_route: "refuse", runtime_route: null },
      audit: { event_valid: false, tool_name: null, proposed_arguments_hash: null },
    });
    expect(envelope.validation_errors.map((i) => i.code)).toEqual(["unknown_tool_category", "unknown_route"]);
    expect(envelope.architecture_decision.reasons[0]?.message).toBe(
      "the event is not a valid v1 event: tool_category: unknown tool category `deleter` (expected public_read, private_read, write or unknown) (and 1 more)",
    );
  });

  it("treats a missing route as an unknown route", () => {
    const rest: Record<string, unknown> = { ...DOC.publicRead };
    delete rest["recommended_route"];
    expect(checkToolPrecheck(rest).hard_blockers).toEqual(["schema_invalid", "unknown_route"]);
  });

  it("does not mistake inherited property names for fields (valueOf, constructor, __proto__)", () => {
    const event = JSON.parse('{"valueOf":"","constructor":1,"__proto__":{"x":1}}') as unknown;
    const envelope = checkToolPrecheck(event);
    expect(envelope.hard_blockers).toEqual(["schema_invalid", "unknown_tool_category", "unknown_route"]);
    expect(envelope.validation_errors.map((i) => i.path[0])).toEqual(
      expect.arrayContaining(["valueOf", "constructor", "__proto__"]),
    );
  });

  it("never throws, even on a proxy whose every trap throws", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("trap");
        },
        ownKeys() {
          throw new Error("trap");
        },
      },
    );
    const envelope = checkToolPrecheck(hostile);
    expect(envelope.recommended_action).toBe("refuse");
    expect(shouldExecuteTool(envelope)).toBe(false);
  });

  it("offers checkToolCall and gateAction as the same check", () => {
    expect(checkToolCall(DOC.privateReadMissingAuth)).toEqual(checkToolPrecheck(DOC.privateReadMissingAuth));
    expect(gateAction(DOC.unknownDestructive)).toEqual(checkToolPrecheck(DOC.unknownDestructive));
  });
});
