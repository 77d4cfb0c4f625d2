import { describe, expect, it } from "vitest";
import {
  createRedactor,
  DEFAULT_REDACTION,
  REDACTED,
  redactAuditInput,
  type AuditEventInput,
} from "../../src/index.js";

const GH_A = `ghp_${"a".repeat(36)}`;
const GH_B = `ghp_${"b".repeat(36)}`;

describe("redacting an audit record", () => {
  it("keeps every key whose name is a secret, each with its value, instead of collapsing them into one", () => {
    const redact = createRedactor(DEFAULT_REDACTION, { secrets: () => ["hunter2hunter2"] });
    const input: AuditEventInput = {
      event_type: "tool_call_intercepted",
      metadata: {
        parameters: { [GH_A]: "read", [GH_B]: "admin", hunter2hunter2: 1, password: "p", plain: "kept" },
      },
    };
    const out = redactAuditInput(input, redact);
    const parameters = (out.metadata as { parameters: Record<string, unknown> }).parameters;
    expect(parameters).toEqual({
      [REDACTED]: "read",
      [`${REDACTED}#2`]: "admin",
      [`${REDACTED}#3`]: 1,
      password: REDACTED,
      plain: "kept",
    });
    expect(JSON.stringify(out)).not.toMatch(/ghp_|hunter2/);
  });

  it("does not let a key already named like a redacted one take another's place", () => {
    const redact = createRedactor(DEFAULT_REDACTION);
    const out = redact({ [`${REDACTED}#2`]: "x", [GH_A]: "a", [REDACTED]: "y", [GH_B]: "b" });
    expect(out).toEqual({
      [`${REDACTED}#2`]: "x",
      [REDACTED]: "a",
      [`${REDACTED}#3`]: "y",
      [`${REDACTED}#4`]: "b",
    });
  });
});
