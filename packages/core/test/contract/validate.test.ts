import { describe, expect, it } from "vitest";
import { assertContractEvent, MAX_CONTRACT_ISSUES, validateContractEvent } from "../../src/contract/index.js";
import { ValidationError, type Issue } from "../../src/issues/index.js";
import { DOC, GOOD_REF } from "./fixtures.js";

function issuesOf(event: unknown): readonly Issue[] {
  const result = validateContractEvent(event);
  if (result.ok) throw new Error("expected the event to be invalid");
  return result.issues;
}

describe("validateContractEvent", () => {
  it("accepts every document example and returns a copy of the event", () => {
    for (const event of Object.values(DOC)) {
      const result = validateContractEvent(event);
      expect(result.ok).toBe(true);
      if (result.ok) {
        expect(result.value).toEqual(event);
        expect(result.value).not.toBe(event);
      }
    }
  });

  it("accepts string and structured evidence refs side by side", () => {
    expect(validateContractEvent({ ...DOC.writeMissingConfirmation, evidence_refs: ["a", GOOD_REF] }).ok).toBe(true);
  });

  it("names each missing required field with its path", () => {
    const rest: Record<string, unknown> = { ...DOC.publicRead };
    delete rest["tool_name"];
    delete rest["risk_domain"];
    const issues = issuesOf(rest);
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: "contract_missing_field", path: ["tool_name"] }),
        expect.objectContaining({ code: "contract_missing_field", path: ["risk_domain"] }),
      ]),
    );
  });

  it("rejects an unknown field and suggests the field that was meant", () => {
    const rest: Record<string, unknown> = { ...DOC.publicRead, tool_categroy: "public_read" };
    delete rest["tool_category"];
    const issues = issuesOf(rest);
    expect(issues).toContainEqual({
      code: "contract_unknown_field",
      path: ["tool_categroy"],
      message: "unknown field `tool_categroy`",
      help: "did you mean `tool_category`",
    });
  });

  it("gives each closed enum its own code and a suggestion for a typo", () => {
    const issues = issuesOf({
      ...DOC.publicRead,
      tool_category: "wirte",
      authorization_state: "admin",
      risk_domain: "space",
      recommended_route: "acept",
    });
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ["unknown_tool_category", ["tool_category"]],
      ["unknown_authorization_state", ["authorization_state"]],
      ["unknown_risk_domain", ["risk_domain"]],
      ["unknown_route", ["recommended_route"]],
    ]);
    expect(issues[0]?.help).toBe("did you mean `write`");
    expect(issues[3]?.help).toBe("did you mean `accept`");
    expect(issues[0]?.message).toBe(
      "unknown tool category `wirte` (expected public_read, private_read, write or unknown)",
    );
  });

  it("refuses any schema version but the negotiated one", () => {
    expect(validateContractEvent({ ...DOC.publicRead, schema_version: "aana.agent_tool_precheck.v1" }).ok).toBe(true);
    const issues = issuesOf({ ...DOC.publicRead, schema_version: "aana.agent_tool_precheck.v2" });
    expect(issues).toEqual([expect.objectContaining({ code: "unsupported_schema_version", path: ["schema_version"] })]);
  });

  it("reports nested evidence problems with their index path", () => {
    const issues = issuesOf({
      ...DOC.writeMissingConfirmation,
      evidence_refs: [
        "ok",
        7,
        "",
        { ...GOOD_REF, kind: "auth_evnt", freshness: { status: "old" } },
        { kind: "policy" },
      ],
    });
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ["contract_wrong_type", ["evidence_refs", 1]],
      ["contract_empty_string", ["evidence_refs", 2]],
      ["contract_invalid_value", ["evidence_refs", 3, "kind"]],
      ["contract_invalid_value", ["evidence_refs", 3, "freshness", "status"]],
      ["contract_missing_field", ["evidence_refs", 4, "source_id"]],
    ]);
    expect(issues[2]?.help).toBe("did you mean `auth_event`");
  });

  it("reports a wrong type once, not also as an enum failure", () => {
    const issues = issuesOf({ ...DOC.publicRead, recommended_route: 7, proposed_arguments: [] });
    expect(issues).toEqual([
      { code: "contract_wrong_type", path: ["proposed_arguments"], message: "expected an object, got an array" },
      { code: "contract_wrong_type", path: ["recommended_route"], message: "expected a string, got a number" },
    ]);
  });

  it.each([null, [], "event", 42, true, undefined])("refuses %j as not an object", (value) => {
    expect(issuesOf(value)).toEqual([expect.objectContaining({ code: "contract_not_object", path: [] })]);
  });

  it("caps the number of issues and says how many were left out", () => {
    const refs = Array.from({ length: 200 }, () => 0);
    const issues = issuesOf({ ...DOC.publicRead, evidence_refs: refs });
    expect(issues).toHaveLength(MAX_CONTRACT_ISSUES + 1);
    expect(issues[MAX_CONTRACT_ISSUES]).toEqual({
      code: "contract_too_many_issues",
      path: [],
      message: "150 more issues not shown",
    });
  });

  it("still finds a bad evidence ref beyond the refs examined in detail", () => {
    const refs: unknown[] = Array.from({ length: 1000 }, () => "ok");
    refs[900] = { source_id: "x", kind: "nope" };
    expect(issuesOf({ ...DOC.publicRead, evidence_refs: refs })).toEqual([
      expect.objectContaining({
        code: "contract_invalid_value",
        path: ["evidence_refs", 900, "kind"],
        message: expect.stringMatching(/^unknown evidence kind `nope` /) as unknown,
      }),
    ]);
  });

  it("caps a hostile flood of problems (half a million bad refs, many unknown fields)", () => {
    const flood = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`extra_${i}`, i]));
    const issues = issuesOf({ ...DOC.publicRead, ...flood, evidence_refs: Array.from({ length: 500_000 }, () => 0) });
    expect(issues).toHaveLength(MAX_CONTRACT_ISSUES + 1);
    expect(issues[MAX_CONTRACT_ISSUES]?.code).toBe("contract_too_many_issues");
  });

  it("quotes long user input cut short in messages", () => {
    const issues = issuesOf({ ...DOC.publicRead, tool_category: "x".repeat(10_000) });
    expect(issues[0]?.message.length).toBeLessThan(200);
  });

  it("judges the JSON form once, so a getter cannot change its answer after validation", () => {
    let reads = 0;
    const event = {
      ...DOC.publicRead,
      get tool_category() {
        reads++;
        return reads === 1 ? "public_read" : "unknown";
      },
    };
    const result = validateContractEvent(event);
    expect(result.ok && result.value.tool_category).toBe("public_read");
    expect(reads).toBe(1);
  });

  it("refuses values with no JSON form instead of throwing", () => {
    const cyclic: Record<string, unknown> = { ...DOC.publicRead };
    cyclic["proposed_arguments"] = cyclic;
    expect(issuesOf(cyclic)[0]?.code).toBe("contract_not_json");
    expect(issuesOf({ ...DOC.publicRead, proposed_arguments: { n: 1n } })[0]?.code).toBe("contract_not_json");
    const throwing = Object.defineProperty({}, "tool_name", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    expect(issuesOf(throwing)[0]).toEqual({
      code: "contract_not_json",
      path: [],
      message: "event has no JSON form: boom",
    });
  });

  it("refuses nesting too deep to serialise with a clear message", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(issuesOf({ ...DOC.publicRead, proposed_arguments: deep })[0]?.message).toBe(
      "event has no JSON form: nested too deeply",
    );
  });

  it("assertContractEvent throws a ValidationError carrying the issues", () => {
    expect(assertContractEvent(DOC.publicRead)).toEqual(DOC.publicRead);
    expect(() => assertContractEvent({})).toThrow(ValidationError);
  });
});
