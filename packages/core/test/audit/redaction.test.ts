import { describe, expect, it } from "vitest";
import {
  createRedactor,
  redactAuditInput,
  AUDIT_REDACTED,
  DEFAULT_REDACTION,
  type AuditEventInput,
} from "../../src/audit/index.js";

describe("audit redaction", () => {
  const redact = createRedactor();

  it("replaces values under secret-looking key names, case-insensitively, at any depth", () => {
    const out = redact({
      parameters: {
        to: "a@example.com",
        GitHub_Token: "ghx-123",
        nested: [{ password: "hunter2" }, { Authorization: "x" }],
        client_secret: { a: 1 },
        api_key: "k",
        tokenizer: "whitespace",
      },
    });
    expect(out).toEqual({
      parameters: {
        to: "a@example.com",
        GitHub_Token: AUDIT_REDACTED,
        nested: [{ password: AUDIT_REDACTED }, { Authorization: AUDIT_REDACTED }],
        client_secret: AUDIT_REDACTED,
        api_key: AUDIT_REDACTED,
        tokenizer: AUDIT_REDACTED,
      },
    });
  });

  it("replaces secret-shaped substrings in any string value and keeps the rest", () => {
    const out = redact({
      header: "Bearer abcdefghijklmnop.qrs",
      note: "use sk-abcdef1234567890 for the call",
      list: ["ghp_abcdefghijklmnopqrstuvwxyz0123", "plain"],
    });
    expect(out).toEqual({
      header: AUDIT_REDACTED,
      note: `use ${AUDIT_REDACTED} for the call`,
      list: [AUDIT_REDACTED, "plain"],
    });
  });

  it("returns the same object when nothing matches and never mutates its input", () => {
    const input = { a: { b: ["c", 1, null, true] } };
    const snapshot = JSON.stringify(input);
    expect(redact(input)).toBe(input);
    const secret = { a: { password: "p" } };
    redact(secret);
    expect(secret.a.password).toBe("p");
    expect(JSON.stringify(input)).toBe(snapshot);
  });

  it("follows configured patterns instead of the defaults", () => {
    const custom = createRedactor({ keys: ["pin", "x-*"], values: [/\d{4}-\d{4}/] });
    expect(custom({ pin: "1234", "X-Trace": "t", token: "kept", card: "card 1234-5678 ok" })).toEqual({
      pin: AUDIT_REDACTED,
      "X-Trace": AUDIT_REDACTED,
      token: "kept",
      card: `card ${AUDIT_REDACTED} ok`,
    });
  });

  it("redacts an event input's metadata and string fields, leaving credential names alone", () => {
    const input: AuditEventInput = {
      event_type: "credential_injected",
      tool: "create_issue",
      policy_rule: "Bearer abcdefghijklmnop",
      metadata: { credential: "github_token", parameters: { auth: "Bearer abcdefghijklmnop" } },
    };
    const out = redactAuditInput(input, createRedactor(DEFAULT_REDACTION));
    expect(out).toEqual({
      event_type: "credential_injected",
      tool: "create_issue",
      policy_rule: AUDIT_REDACTED,
      metadata: { credential: "github_token", parameters: { auth: AUDIT_REDACTED } },
    });
    expect(JSON.stringify(out)).not.toContain("abcdefghijklmnop");
  });
});

describe("audit redaction with patterns that cannot share one quick test", () => {
  it("still applies back-references and unicode patterns", () => {
    const redact = createRedactor({ keys: [], values: [/(x)\1{3}/, /é+/u, /\bsk-[a-z]{4}/] });
    expect(redact("a xxxx b ééé sk-abcd")).toBe(`a ${AUDIT_REDACTED} b ${AUDIT_REDACTED} ${AUDIT_REDACTED}`);
  });
});
