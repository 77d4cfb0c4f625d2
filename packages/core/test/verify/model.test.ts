import { describe, expect, it } from "vitest";
import {
  buildVerifyModel,
  checkIntentAgainstPolicy,
  collectActions,
  compileIntent,
  DEFAULT_SESSION_SETTINGS,
  parseSessionSettings,
  sampleGlob,
  type CompiledIntent,
} from "../../src/index.js";
import { NOW, policyOf } from "./core-executor.js";

const OPEN_POLICY = policyOf(`version: "1"\ndefault_action: ask\nrules: []\n`);

function intentOf(value: unknown): CompiledIntent {
  const compiled = compileIntent(value);
  if (!compiled.ok) throw new Error("bad intent");
  return compiled.value;
}

describe("sampleGlob", () => {
  it("returns a string the glob matches, or the name itself when it is not a glob", () => {
    expect(sampleGlob("calendar.read_*")).toBe("calendar.read_x");
    expect(sampleGlob("mail.{send,draft}_email")).toBe("mail.send_email");
    expect(sampleGlob("files.?et")).toBe("files.xet");
    expect(sampleGlob("mail.send_email")).toBe("mail.send_email");
  });
});

describe("collectActions", () => {
  it("takes names from the intent, transitions and policy rules, and adds the action nothing names", () => {
    const policy = policyOf(`
version: "1"
default_action: ask
rules:
  - { match: { server: chat, tool: post_message }, action: allow }
`);
    const settings = parseSessionSettings({ transitions: ["web.get_webpage -> mail.send_email: ask"] });
    if (!settings.ok) throw new Error("bad settings");
    const { actions } = collectActions(
      policy,
      intentOf({ goal: "g", allowed_actions: ["calendar.read_events"] }),
      settings.value,
    );
    expect(actions.map((a) => `${a.server}.${a.tool}`)).toEqual([
      "calendar.read_events",
      "web.get_webpage",
      "mail.send_email",
      "chat.post_message",
      "other.other_tool",
    ]);
  });

  it("samples one action per category a glob can reach that no named action covers", () => {
    const intent = intentOf({ goal: "g", allowed_actions: ["mail.search_emails", "mail.*"] });
    const { actions } = collectActions(OPEN_POLICY, intent, DEFAULT_SESSION_SETTINGS);
    const names = actions.map((a) => `${a.server}.${a.tool}`);
    expect(names).toContain("mail.search_emails");
    expect(names).not.toContain("mail.read_x");
    expect(names).toContain("mail.send_x");
    expect(names).toContain("mail.publish_x");
  });
});

describe("buildVerifyModel", () => {
  it("knows which actions are in the intent, consequential, sends and untrusted reads", () => {
    const built = buildVerifyModel({
      policy: OPEN_POLICY,
      intent: { goal: "g", allowed_actions: ["calendar.read_events", "mail.send_email"] },
      settings: { trusted_servers: ["calendar"] },
    });
    if (!built.ok) throw new Error("bad model");
    const byName = new Map(built.value.model.actions.map((a) => [a.name, a]));
    expect(byName.get("calendar.read_events")).toMatchObject({
      inIntent: true,
      consequential: false,
      untrustedRead: false,
    });
    expect(byName.get("mail.send_email")).toMatchObject({ inIntent: true, consequential: true, send: true });
    expect(byName.get("other.other_tool")).toMatchObject({ inIntent: false, other: true });
    expect(built.value.model.values.map((v) => v.cls)).toEqual(["none", "user_input", "external_untrusted"]);
  });

  it("counts a category the policy's classify gives as well as the built-in one", () => {
    const policy = policyOf(`
version: "1"
default_action: ask
rules: []
classify:
  - { tool: send_email, category: read }
`);
    const built = buildVerifyModel({
      policy,
      intent: { goal: "g", allowed_actions: ["mail.send_email"] },
      settings: {},
    });
    if (!built.ok) throw new Error("bad model");
    expect(built.value.model.actions[0]).toMatchObject({ categories: ["communication", "read"], consequential: true });
  });

  it("reports an invalid intent and invalid settings with their own paths", () => {
    const built = buildVerifyModel({ policy: OPEN_POLICY, intent: { goal: 3 }, settings: { nonsense: true } });
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.issues.some((i) => i.path[0] === "intent")).toBe(true);
    expect(built.issues.some((i) => i.path[0] === "settings" && i.code === "invalid_session_config")).toBe(true);
  });
});

describe("checkIntentAgainstPolicy", () => {
  const policy = policyOf(`
version: "1"
default_action: ask
rules:
  - { id: no-mail, match: { tool: send_email }, action: deny }
  - { id: ask-chat, match: { tool: post_message }, action: ask }
`);

  it("reports an allowed action the policy refuses outright", () => {
    const built = buildVerifyModel({
      policy,
      intent: { goal: "g", allowed_actions: ["calendar.read_events", "mail.send_email"] },
      settings: {},
    });
    if (!built.ok) throw new Error("bad model");
    const issues = checkIntentAgainstPolicy(policy, built.value, NOW);
    expect(issues).toEqual([
      expect.objectContaining({ code: "intent_contradicts_policy", path: ["allowed_actions", 1] }),
    ]);
    expect(issues[0]?.message).toBe(
      "the intent allows `mail.send_email` but the policy refuses it outright (rule `no-mail`)",
    );
  });

  it("accepts an allowed action the policy only asks about", () => {
    const built = buildVerifyModel({
      policy,
      intent: { goal: "g", allowed_actions: ["chat.post_message"] },
      settings: {},
    });
    if (!built.ok) throw new Error("bad model");
    expect(checkIntentAgainstPolicy(policy, built.value, NOW)).toEqual([]);
  });
});
