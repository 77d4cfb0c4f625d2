import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  checkParsedToolPrecheck,
  checkToolPrecheck,
  decideContractEvent,
  shouldExecuteTool,
  validateContractEvent,
} from "../../src/contract/index.js";
import { canonicalSha256Ref, MAX_CANONICAL_DEPTH } from "../../src/canonical-json/index.js";
import type { Issue } from "../../src/issues/index.js";
import { DOC } from "./fixtures.js";

const LONE = "\ud800";

function issuesOf(event: unknown): readonly Issue[] {
  const result = validateContractEvent(event);
  if (result.ok) throw new Error("expected the event to be invalid");
  return result.issues;
}

/** `{ a: { a: … { a: 1 } } }`, `levels` objects deep. */
function nested(levels: number): Record<string, unknown> {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value as Record<string, unknown>;
}

describe("an event the audit record cannot bind (not I-JSON) is refused", () => {
  it.each([
    ["an argument value", { ...DOC.publicRead, proposed_arguments: { q: `x${LONE}` } }, ["proposed_arguments", "q"]],
    ["an argument name", { ...DOC.publicRead, proposed_arguments: { [`k${LONE}`]: 1 } }, ["proposed_arguments"]],
    [
      "a nested argument",
      { ...DOC.publicRead, proposed_arguments: { list: ["ok", LONE] } },
      ["proposed_arguments", "list", 1],
    ],
    ["the tool name", { ...DOC.publicRead, tool_name: `search${LONE}` }, ["tool_name"]],
    ["a string evidence ref", { ...DOC.writeMissingConfirmation, evidence_refs: [LONE] }, ["evidence_refs", 0]],
    ["the user intent", { ...DOC.publicRead, user_intent: `\udc00 intent` }, ["user_intent"]],
  ] as const)("a lone surrogate in %s", (_where, event, path) => {
    const envelope = checkToolPrecheck(event);
    expect(envelope.validation_errors).toEqual([
      {
        code: "contract_not_canonical",
        path,
        message: expect.stringContaining("lone surrogate") as unknown,
      },
    ]);
    expect(envelope.recommended_action).toBe("refuse");
    expect(envelope.hard_blockers).toEqual(["schema_invalid"]);
    expect(shouldExecuteTool(envelope)).toBe(false);
    expect(shouldExecuteTool(checkParsedToolPrecheck(event))).toBe(false);
  });

  it("accepts well-paired surrogates (an emoji) in arguments and names", () => {
    const envelope = checkToolPrecheck({ ...DOC.publicRead, tool_name: "send_😀", proposed_arguments: { "😀": "😀" } });
    expect(shouldExecuteTool(envelope)).toBe(true);
  });

  it(`refuses arguments nested deeper than the ${MAX_CANONICAL_DEPTH} levels the hash canonicalises`, () => {
    const tooDeep = checkToolPrecheck({ ...DOC.publicRead, proposed_arguments: nested(MAX_CANONICAL_DEPTH + 1) });
    expect(tooDeep.validation_errors.map((i) => [i.code, i.path])).toEqual([
      ["contract_not_canonical", ["proposed_arguments"]],
    ]);
    expect(shouldExecuteTool(tooDeep)).toBe(false);
    const deepest = nested(MAX_CANONICAL_DEPTH);
    const fits = checkToolPrecheck({ ...DOC.publicRead, proposed_arguments: deepest });
    expect(shouldExecuteTool(fits)).toBe(true);
    expect(fits.audit.proposed_arguments_hash).toBe(canonicalSha256Ref(deepest));
  });

  it("decideContractEvent refuses an unvalidated event whose arguments cannot be hashed", () => {
    const envelope = decideContractEvent({ ...DOC.publicRead, proposed_arguments: { q: LONE } });
    expect(envelope.validation_errors.map((i) => [i.code, i.path])).toEqual([
      ["contract_not_canonical", ["proposed_arguments"]],
    ]);
    expect(shouldExecuteTool(envelope)).toBe(false);
  });

  it.each([
    ["2^53", 2 ** 53, ["proposed_arguments", "id"]],
    [
      "a snowflake id, as JSON.parse reads it",
      JSON.parse("1234567890123456789") as number,
      ["proposed_arguments", "id"],
    ],
    ["-2^53", -(2 ** 53), ["proposed_arguments", "id"]],
    ["1e20", 1e20, ["proposed_arguments", "id"]],
  ] as const)(
    "refuses a number beyond ±2^53−1 in the arguments (%s): its digits may have been lost",
    (_n, id, path) => {
      const envelope = checkToolPrecheck({ ...DOC.publicRead, proposed_arguments: { id } });
      expect(envelope.validation_errors.map((i) => [i.code, i.path])).toEqual([["contract_unsafe_integer", path]]);
      expect(shouldExecuteTool(envelope)).toBe(false);
    },
  );

  it("refuses an unsafe integer read from JSON text, naming where it is", () => {
    const text =
      '{"tool_name":"t","tool_category":"public_read","authorization_state":"none","evidence_refs":[],' +
      '"risk_domain":"research","proposed_arguments":{"ids":[1,1234567890123456789]},"recommended_route":"accept"}';
    const envelope = checkParsedToolPrecheck(JSON.parse(text));
    expect(envelope.validation_errors.map((i) => [i.code, i.path])).toEqual([
      ["contract_unsafe_integer", ["proposed_arguments", "ids", 1]],
    ]);
  });

  it("accepts the largest safe integers and fractions", () => {
    const args = { a: Number.MAX_SAFE_INTEGER, b: -Number.MAX_SAFE_INTEGER, c: 1.5, d: 0 };
    expect(shouldExecuteTool(checkToolPrecheck({ ...DOC.publicRead, proposed_arguments: args }))).toBe(true);
  });

  it("reports the problem only for an event the schema accepts (schema issues come first)", () => {
    const issues = issuesOf({ ...DOC.publicRead, tool_category: "nope", proposed_arguments: { q: LONE } });
    expect(issues.map((i) => i.code)).toEqual(["unknown_tool_category"]);
  });

  it("gives every valid event an arguments hash, so an accept is always bound to its arguments", () => {
    const text = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom(LONE, "a\udfff", "😀", "\ud83d", ""));
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        text,
        fc.double(),
        fc.integer(),
        fc.constantFrom(2 ** 53, -(2 ** 60), 1e21),
        fc.array(tie("node"), { maxLength: 3 }),
        fc.dictionary(text, tie("node"), { maxKeys: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(text, value, { maxKeys: 4 }), text, (args, name) => {
        const envelope = checkToolPrecheck({ ...DOC.publicRead, tool_name: `t${name}`, proposed_arguments: args });
        if (envelope.validation_errors.length === 0) expect(envelope.audit.proposed_arguments_hash).not.toBeNull();
        expect(shouldExecuteTool(envelope)).toBe(envelope.audit.proposed_arguments_hash !== null);
      }),
      { numRuns: 1000 },
    );
  });
});
