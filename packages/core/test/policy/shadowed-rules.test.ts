import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compilePolicy, matchPolicy } from "../../src/evaluate/index.js";
import { assertPolicy, findShadowedRules } from "../../src/policy/index.js";
import type { ArgMatchValue } from "../../src/policy/types.js";
import { CATEGORIES, type ActionRequest } from "../../src/request/index.js";
import { buildPolicy, type RuleSpec } from "../evaluate/policy-builder.js";

function shadowed(yaml: string): string[] {
  return findShadowedRules(assertPolicy(yaml).rules).map((issue) => issue.message);
}

describe("findShadowedRules", () => {
  it("reports a narrow deny written after a broad allow, naming the rule that decides instead", () => {
    const messages = shadowed(`
version: "1"
rules:
  - id: reads
    match: { category: read }
    action: allow
  - id: no-etc
    match: { category: read, args: { path: "/etc/**" } }
    action: deny
  - id: mail
    match: { tool: "send_*" }
    action: ask
  - id: gmail
    match: { tool: send_email, server: gmail }
    action: allow
`);
    expect(messages).toEqual([
      "rule `no-etc` can never match: rule `reads` (line 4) comes first and matches every call it would, so it allows what this rule would deny",
      "rule `gmail` can never match: rule `mail` (line 10) comes first and matches every call it would, so it asks about what this rule would allow",
    ]);
  });

  it("does not report a rule an earlier one only sometimes covers", () => {
    expect(
      shadowed(`
version: "1"
rules:
  - id: allow-tmp
    match: { args: { path: "/tmp/**" } }
    action: allow
  - id: deny-tmp-writes          # a list with one path outside /tmp passes the allow by and reaches this
    match: { tool: write_file, args: { path: "/tmp/**" } }
    action: deny
  - id: night
    match: { tool: "*" }
    action: deny
    conditions: { time_of_day: { after: "22:00", before: "06:00" } }
  - id: delete
    match: { tool: delete_all }
    action: deny
  - id: reads-on-files
    match: { category: read, server: files }
    action: allow
  - id: reads
    match: { category: read }
    action: ask
  - id: some-send
    match: { tool: "send_*" }
    action: ask
  - id: other-send
    match: { tool: "send_e*" }
    action: deny
  - id: allow-drop          # Drop_Table passes this by and reaches the deny below
    match: { tool: drop_table }
    action: allow
  - id: no-drop
    match: { tool: drop_table }
    action: deny
`),
    ).toEqual([]);
  });
});

describe("findShadowedRules reads `?` and `[…]` as the matcher does", () => {
  it("reports a deny rule an earlier deny's `?` or `[…]` covers through a reading unit (`rn` read as `m`)", () => {
    // the earlier rules meet every name the later ones do: `datm`, `DATM`, `datｍ` and `datrn` alike
    expect(
      shadowed(`
version: "1"
rules:
  - id: dat-any
    match: { tool: "dat?" }
    action: deny
  - id: datm
    match: { tool: datm }
    action: deny
  - id: move-class
    match: { tool: "[m]ove_file" }
    action: ask
  - id: move
    match: { tool: move_file }
    action: deny
`),
    ).toEqual([
      "rule `datm` can never match: rule `dat-any` (line 4) comes first and matches every call it would",
      "rule `move` can never match: rule `move-class` (line 10) comes first and matches every call it would, so it asks about what this rule would deny",
    ]);
  });

  it("does not report a rule whose name an earlier `?` misses in some spelling", () => {
    // `da?` takes one reading unit, never the `rnx` of `darnx`; `x[I]` meets `xI` but not `xl`, which folds as
    // `xI` does (both `xl`) and which the later rule refuses
    expect(
      shadowed(`
version: "1"
rules:
  - { id: a, match: { tool: "da?" }, action: deny }
  - { id: b, match: { tool: darnx }, action: deny }
  - { id: c, match: { tool: "[x]ove" }, action: deny }
  - { id: d, match: { tool: move }, action: deny }
  - { id: e, match: { tool: "?ove" }, action: allow }
  - { id: f, match: { tool: rnove }, action: deny }
  - { id: g, match: { tool: "x[I]" }, action: deny }
  - { id: h, match: { tool: xI }, action: deny }
`),
    ).toEqual([]);
  });
});

const TOOLS = ["send_email", "send_sms", "read_file", "exec", "a/b"];
/** Names whose folds have reading units (`rn`, read as `m`), as rules and as calls. */
const LOOK_ALIKE_TOOLS = ["datm", "datrn", "move", "rnove", "Move", "darn", "dam", "rn", "xI", "xl", "x1"];
const ARG_VALUES: ArgMatchValue[] = ["*@corp.com", "x", "*", 1, true, null];
const rule: fc.Arbitrary<RuleSpec> = fc.record(
  {
    match: fc.record(
      {
        tool: fc.constantFrom(
          ...TOOLS,
          ...LOOK_ALIKE_TOOLS,
          "send_*",
          "*",
          "**",
          "{send,read}_*",
          "!send_*",
          "?ead_file",
          "dat?",
          "da?",
          "[m]ove",
          "[M]ove",
          "?ove",
          "[!x]ove",
          "[a-z]?",
          "x[I]",
          "x[l1]",
        ),
        server: fc.constantFrom("mail", "files", "*", "m*"),
        category: fc.constantFrom(...CATEGORIES),
        args: fc.dictionary(fc.constantFrom("to", "n"), fc.constantFrom(...ARG_VALUES), { maxKeys: 2 }),
      },
      { requiredKeys: [] },
    ),
    action: fc.constantFrom("allow" as const, "ask" as const, "deny" as const),
    time_of_day: fc.constant({ after: "09:00", before: "17:00", timezone: "UTC" }),
  },
  { requiredKeys: ["action"] },
);
const scalar = fc.constantFrom<unknown>("a@corp.com", "x", "evil@x.com", 1, 2, true, null);
const request: fc.Arbitrary<ActionRequest> = fc
  .record(
    {
      tool: fc.constantFrom(
        ...TOOLS,
        ...LOOK_ALIKE_TOOLS,
        "other",
        "send_",
        "Send_Email",
        "READ_FILE",
        "datｍ",
        "DATM",
        "dat𝐦",
        "ｍove",
        "Ｍove",
        "rnove",
        "RNove",
        "ᴍove",
        "darnx",
        "daｍ",
      ),
      server: fc.constantFrom("mail", "files", "other"),
      arguments: fc.dictionary(fc.constantFrom("to", "n"), fc.oneof(scalar, fc.array(scalar, { maxLength: 3 })), {
        maxKeys: 2,
      }),
      category: fc.constantFrom(...CATEGORIES),
    },
    { requiredKeys: ["tool", "arguments"] },
  )
  .map((r) => r as ActionRequest);

describe("findShadowedRules is sound", () => {
  it("never reports a rule that decides some request (property)", () => {
    fc.assert(
      fc.property(
        fc.array(rule, { maxLength: 12 }),
        fc.array(request, { minLength: 1, maxLength: 20 }),
        fc.constantFrom(new Date("2026-03-02T10:00:00Z"), new Date("2026-03-02T23:00:00Z")),
        (specs, requests, now) => {
          const policy = buildPolicy(specs);
          const reported = new Set(findShadowedRules(policy.rules).map((issue) => issue.path[1]));
          const compiled = compilePolicy(policy);
          for (const r of requests) {
            const decided = matchPolicy(compiled, r, now).rule;
            if (decided !== null) expect(reported.has(decided.index)).toBe(false);
          }
        },
      ),
      { numRuns: 1500 },
    );
  });
});
