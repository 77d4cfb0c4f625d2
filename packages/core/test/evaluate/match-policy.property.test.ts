import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compilePolicy, evaluatePolicy, matchPolicy } from "../../src/evaluate/index.js";
import { CATEGORIES, RISK_LEVELS, type ActionRequest } from "../../src/request/index.js";
import type { ArgMatchValue, ClassificationOverride, TimeOfDay } from "../../src/policy/types.js";
import { ROUTES } from "../../src/route/index.js";
import { buildPolicy, type RuleSpec } from "./policy-builder.js";
import { referenceMatch } from "./reference-evaluator.js";

const TOOLS = [
  "send_email",
  "send_sms",
  "read_file",
  "read_dir",
  "deploy_app",
  "exec",
  "execute",
  "a",
  "x_email",
  "./send_x",
  "!x",
];
const TOOL_PATTERNS = [
  ...TOOLS,
  "send_*",
  "se*",
  "read_*",
  "*_email",
  "*",
  "**",
  "{send,read}_*",
  "!send_*",
  "?ead_file",
  "*_*",
  "deploy_{app,db}",
  "./send_*",
  "s*l",
  "[rs]*",
  "exec*",
  "commit_*",
  "dat?",
  "e*e",
  "*file",
  "commit_x",
  "datm",
];
const SERVERS = ["mail", "prod-eu", "prod-us", "files"];
const SERVER_PATTERNS = [...SERVERS, "prod-*", "*", "m?il", "*-eu", "Files"];
const ARG_KEYS = ["to", "n", "a.b", "a.c.d", "flag"];
const ARG_VALUES: ArgMatchValue[] = [
  "*@corp.com",
  "x",
  "1*",
  "*",
  "true",
  1,
  100,
  0,
  true,
  false,
  null,
  "ann@corp.com",
  "/srv/**",
  "/srv/*/x",
  "*rm -rf*",
  "yes",
  "off",
  "/srv/*",
  "https://api.corp/**",
  "*@Corp.com",
  "/SRV/**",
  "*@bücher.example",
  "*@xn--bcher-kva.example",
  "/srv/x",
  "/srv/cafe\u0301/**",
  "*@ｃｏｒｐ.com",
  "/home/ann/**",
  "/Users/*/x",
  "~/x",
  "~ann/**",
  "/root/**",
  "http://api.corp/**",
  "../etc/x",
  "api.corp",
  "api.corp/v1/**",
  "//api.corp/*",
  "*.corp:443/**",
  "https://*.corp/**",
  "/srv/a/**",
  "**/x",
  "**/srv/*",
  "C:\\\\Users\\\\ann\\\\**",
  "C:\\Users\\ann\\x",
  "./srv/**",
  "./x",
  "./srv/a/*",
  "C:\\Users\\ann",
  ".//srv/**",
  "$HOME/x",
  "%USERPROFILE%\\\\x",
  "*/x",
  "?*/**",
];
const TIMES = ["00:00", "06:00", "09:00", "09:30", "17:00", "22:00", "23:59", "24:00"];
const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"];

const timeWindow: fc.Arbitrary<TimeOfDay> = fc
  .record(
    {
      after: fc.constantFrom(...TIMES.filter((t) => t !== "24:00")),
      before: fc.constantFrom(...TIMES),
      timezone: fc.constantFrom(...ZONES),
    },
    { requiredKeys: ["timezone"] },
  )
  .map((w) => w as TimeOfDay);

const ruleSpec: fc.Arbitrary<RuleSpec> = fc.record(
  {
    match: fc.record(
      {
        tool: fc.constantFrom(...TOOL_PATTERNS),
        server: fc.constantFrom(...SERVER_PATTERNS),
        category: fc.constantFrom(...CATEGORIES),
        args: fc.dictionary(fc.constantFrom(...ARG_KEYS), fc.constantFrom(...ARG_VALUES), { maxKeys: 2 }),
      },
      { requiredKeys: [] },
    ),
    action: fc.constantFrom("allow" as const, "ask" as const, "deny" as const),
    time_of_day: timeWindow,
  },
  { requiredKeys: ["action"] },
);

const scalar = fc.oneof(
  fc.constantFrom(
    "ann@corp.com",
    "evil@x.com",
    "x",
    "1",
    "100",
    "true",
    "",
    "a/b",
    " 1e2 ",
    "Yes",
    "off",
    "0",
    "FALSE",
    "ANN@CORP.COM",
    "1_00",
    "ann@ｃｏｒｐ.com",
    "ann@corp\u3002com",
    "ann@co\u200brp.com",
    "Ann <ann@corp.com>",
    "x@y.com, ann@corp.com.",
    "／srv／x",
    "+1_0_0",
    "x@Corp.Com",
  ),
  fc.constantFrom(
    "/srv/x",
    "/srv//x",
    "//srv/a/x",
    "/srv/a/../b/x",
    "/etc/../srv/y",
    "https://api.corp//v1/../x",
    "HTTPS://u@API.corp.:443/%76%31",
    "https://api.corp",
    "cd /srv && rm -rf x",
    "echo\nrm -rf /",
    "/srv/a/b",
    "./srv/x",
    "/SRV/X",
    "/Srv//a/../x",
    "RM -RF /",
    " https://api.corp/x",
    "/srv/%78",
    "/srv/x/",
    "file:///srv/x",
    "ann@bücher.example",
    "ann@XN--BCHER-KVA.example",
    "\t/srv/x ",
    "/srv/a/..%2fx",
    "https://api.corp/v1/..%2F..%2Fx",
    "/srv/%E2%82%AC%zz",
    "/srv/caf\u00e9/x",
    "~/x",
    "~ann/x",
    "~root/y",
    "~/../ann/x",
    "~\\x",
    "api.corp/x",
    "//api.corp/x",
    "API.corp:443/v1",
    "localhost:80/x",
    "\\srv\\x",
    "C:\\Users\\ann\\x",
    "/srv/a\\..\\x",
    "..\\etc\\x",
    "/srv/a/..%2f..%2fetc",
    "/srv/a/%2e%2e/x",
    "/srv/x/.. ",
    "/srv/a/..%5c..%5cx",
    "https://x@evil.example#.api.corp/",
    "https://evil.example\\.api.corp/x",
    "https://api.corp/v1?q=a%2Fb\\c",
    "../../srv/x",
    "../x",
    "a/../../srv/a/x",
    "C:\\Users\\ann\\a#b\\..\\..\\x",
    "/srv/a/%252e%252e/x",
    "/srv/a/..%25252f..%25252fetc",
    "/srv/a/%2525252e%2525252e/x",
    "/srv/%25252578",
    "make; x",
    "files/..;/x",
    ".//srv/x",
    "/srv/%2578",
    "/srv/a/..;/x",
    "/srv/a;v=1/x",
    "https://api.corp/v1/..;/x?q=a;b",
    "/srv/a/．．／x",
    "／srv／a／x",
    "\\\\?\\C:\\Users\\ann\\x",
    "\\\\.\\C:\\Users\\ann\\x",
    "\\\\?\\UNC\\srv\\a\\x",
    "./srv/a/x",
    "././x",
    "./x",
    "C:/Users/ann/x",
    "$HOME/x",
    "${HOME}/x",
    "$home/../ann/x",
    "%USERPROFILE%\\x",
    "%HOMEDRIVE%%HOMEPATH%\\x",
    "$env:USERPROFILE\\x",
    "$HOME",
    "$HOMEX/x",
    "$HOME/%2e%2e/srv/x",
    "/srv/a/%EF%BC%8E%EF%BC%8E%EF%BC%8Fx",
    "/srv/a/%25EF%25BC%258E%25EF%25BC%258E/x",
  ),
  fc.constantFrom(1, 100, 0, -0, 12, 1.5),
  fc.boolean(),
  fc.constant(null),
);
const argValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("value"), { maxLength: 3 }),
    // keys a server may read as a rule's (`B`, `T-o`): evaluation.md, arguments
    fc.dictionary(fc.constantFrom("b", "c", "d", "to", "B", "T-o"), tie("value"), { maxKeys: 3 }),
  ),
})).value;

const request: fc.Arbitrary<ActionRequest> = fc
  .record(
    {
      tool: fc.oneof(
        fc.constantFrom(
          ...TOOLS,
          "send_",
          "s",
          "unknown_tool",
          "sendemail",
          "Send_Email",
          "READ_FILE",
          "Exec",
          "A",
          "ѕend_email",
          "ｒｅａｄ_ｆｉｌｅ",
          "Еxec",
          "cоmmit_x",
          "datrn",
          "DАTM",
        ),
        fc.string({ maxLength: 6 }),
      ),
      server: fc.oneof(fc.constantFrom(...SERVERS, "other", "MAIL", "filеs", "prоd-eu"), fc.string({ maxLength: 4 })),
      arguments: fc.dictionary(
        fc.constantFrom("to", "n", "a", "flag", "zzz", "TO", "ｆlag", "N", "A", "fl_ag"),
        argValue,
        {
          maxKeys: 4,
        },
      ),
      category: fc.constantFrom(...CATEGORIES),
      annotations: fc.record({ readOnlyHint: fc.boolean(), destructiveHint: fc.boolean() }, { requiredKeys: [] }),
    },
    { requiredKeys: ["tool", "arguments"] },
  )
  .map((r) => r as ActionRequest);

const override: fc.Arbitrary<ClassificationOverride> = fc
  .record(
    {
      tool: fc.constantFrom("send_*", "*_email", "read_file", "*", "x*"),
      server: fc.constantFrom(...SERVER_PATTERNS),
      category: fc.constantFrom(...CATEGORIES),
      risk_level: fc.constantFrom(...RISK_LEVELS),
    },
    { requiredKeys: ["tool"] },
  )
  .map((o) => o as ClassificationOverride);

const instant = fc.date({
  min: new Date("2024-01-01T00:00:00Z"),
  max: new Date("2026-12-31T23:59:59Z"),
  noInvalidDate: true,
});

describe("matchPolicy against the naive reference evaluator", () => {
  it("always picks the same rule as a linear scan", () => {
    fc.assert(
      fc.property(
        fc.array(ruleSpec, { maxLength: 30 }),
        fc.constantFrom("allow" as const, "ask" as const, "deny" as const),
        fc.array(request, { minLength: 1, maxLength: 8 }),
        instant,
        fc.array(override, { maxLength: 3 }),
        (specs, def, requests, now, overrides) => {
          const policy = buildPolicy(specs, def, overrides);
          const compiled = compilePolicy(policy);
          for (const r of requests) expect(matchPolicy(compiled, r, now).ruleId).toBe(referenceMatch(policy, r, now));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("agrees on one argument: every pattern against every value, under each action", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ARG_VALUES),
        argValue,
        fc.constantFrom("allow" as const, "ask" as const, "deny" as const),
        fc.constantFrom("to", "TO", "T-o"),
        (pattern, value, action, key) => {
          const policy = buildPolicy([{ id: "r", match: { args: { to: pattern } }, action }], "ask");
          const r: ActionRequest = { tool: "t", arguments: { [key]: value } };
          const now = new Date(0);
          expect(matchPolicy(compilePolicy(policy), r, now).ruleId).toBe(referenceMatch(policy, r, now));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("agrees on time windows at every minute of a day", () => {
    fc.assert(
      fc.property(fc.array(timeWindow, { minLength: 1, maxLength: 4 }), instant, (windows, day) => {
        const policy = buildPolicy(windows.map((w, i) => ({ id: `w${i}`, action: "deny", time_of_day: w })));
        const compiled = compilePolicy(policy);
        const start = Math.floor(day.getTime() / 86_400_000) * 86_400_000;
        for (let m = 0; m < 1440; m += 13) {
          const now = new Date(start + m * 60_000 + 13_000);
          const r: ActionRequest = { tool: "t", arguments: {} };
          expect(matchPolicy(compiled, r, now).ruleId).toBe(referenceMatch(policy, r, now));
        }
      }),
      { numRuns: 40 },
    );
  });

  it("never lets an array with one non-matching element ride an allow rule", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a@corp.com", "b@corp.com"), { maxLength: 5 }), fc.nat(5), (good, at) => {
        const to: string[] = [...good];
        to.splice(Math.min(at, to.length), 0, "evil@x.com");
        const policy = compilePolicy(
          buildPolicy([{ id: "ok", match: { args: { to: "*@corp.com" } }, action: "allow" }], "deny"),
        );
        expect(matchPolicy(policy, { tool: "send_email", arguments: { to } }, new Date(0)).action).toBe("deny");
      }),
    );
  });
});

describe("evaluatePolicy on hostile input", () => {
  const policy = compilePolicy(
    buildPolicy([
      { id: "r1", match: { tool: "send_*", args: { "a.b": "*" } }, action: "allow" },
      {
        id: "r2",
        match: { args: { to: 1 } },
        action: "allow",
        time_of_day: { after: "09:00", timezone: "Asia/Kolkata" },
      },
      { id: "r3", match: { category: "read" }, action: "allow" },
    ]),
  );

  it("never rejects, always gives a known route, and refuses malformed requests", async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), fc.option(fc.date(), { nil: undefined }), async (raw, now) => {
        const verdict = await evaluatePolicy(policy, raw as ActionRequest, { now: now ?? new Date(Number.NaN) });
        expect(ROUTES).toContain(verdict.route);
        const wellFormed =
          typeof raw === "object" &&
          raw !== null &&
          typeof (raw as { tool?: unknown }).tool === "string" &&
          typeof (raw as { arguments?: unknown }).arguments === "object" &&
          (raw as { arguments?: unknown }).arguments !== null &&
          !Array.isArray((raw as { arguments?: unknown }).arguments) &&
          now !== undefined &&
          Number.isFinite(now.getTime());
        if (!wellFormed) expect(verdict.route).toBe("refuse");
        if (verdict.reasons.some((r) => r.code === "evaluation_error")) expect(verdict.route).toBe("refuse");
      }),
      { numRuns: 500 },
    );
  });

  it("refuses requests with hostile argument shapes instead of throwing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ tool: fc.string(), arguments: fc.dictionary(fc.string(), fc.anything()) }),
        async (raw) => {
          const verdict = await evaluatePolicy(policy, raw, { now: new Date(0) });
          expect(ROUTES).toContain(verdict.route);
        },
      ),
      { numRuns: 300 },
    );
  });
});
