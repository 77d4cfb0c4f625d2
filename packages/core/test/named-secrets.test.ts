import { describe, expect, it } from "vitest";
import { readNamedSecrets } from "../src/index.js";

// `proxy.agent_tokens`, `serve.agent_tokens` and `serve.approver_tokens` are read by this one function.
const NAME = /^[a-z_][a-z0-9_]{0,63}$/;

describe("readNamedSecrets: a NAME → sealed token mapping of config.yml", () => {
  it("keeps sealed values by name, skips empty ones, names every bad entry without showing a value", () => {
    const read = readNamedSecrets(
      { ci_bot: "encrypted:AAAA", later: "", nothing: null, "CI Bot": "encrypted:BBBB", plain: "secret-value-123" },
      "serve.agent_tokens",
      "agent",
      NAME,
    );
    expect(read.sealed).toEqual({ ci_bot: "encrypted:AAAA" });
    expect(read.problems).toEqual([
      {
        path: ["CI Bot"],
        message:
          "`serve.agent_tokens.CI Bot`: an agent name is lowercase letters, digits and _ (at most 64), starting with a letter or _",
      },
      {
        path: ["plain"],
        message:
          "`serve.agent_tokens.plain` must be the sealed text `acp config set-secret serve.agent_tokens.plain` writes",
      },
    ]);
    expect(JSON.stringify(read.problems)).not.toContain("secret-value-123");
  });

  it("refuses what is not a mapping, cuts a long name, and says approver for approvers", () => {
    expect(readNamedSecrets(["x"], "proxy.agent_tokens", "agent", NAME).problems[0]?.message).toBe(
      "`proxy.agent_tokens` must be a mapping of agent name to sealed token",
    );
    const long = readNamedSecrets({ ["A".repeat(100)]: "encrypted:x" }, "serve.approver_tokens", "approver", NAME);
    expect(long.problems[0]?.path).toEqual([`${"A".repeat(64)}…`]);
    expect(long.problems[0]?.message).toContain("an approver name is");
    expect(readNamedSecrets(undefined, "proxy.agent_tokens", "agent", NAME)).toEqual({ sealed: {}, problems: [] });
  });
});
