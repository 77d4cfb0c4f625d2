import { describe, expect, it } from "vitest";
import { checkHumanAnswer, isApprovalScope } from "../../src/consent/index.js";

const NOW = new Date("2026-01-15T12:00:00.000Z");

describe("the shared check of a person's answer", () => {
  it.each([
    ["an escape sequence", "no\u001b[2Jway"],
    ["a right-to-left override", "ok \u202egnp.exe"],
    ["a zero-width space", "no\u200bway"],
    ["a line break", "first line\nsecond line"],
    ["a C1 control", "no\u009bway"],
  ])("refuses a reason that holds %s (it is signed and shown to the agent)", (_what, reason) => {
    const problem = checkHumanAnswer({ decision: "denied", approverId: "app:user", reason }, NOW);
    expect(problem).toMatch(/control, invisible or bidirectional character/);
  });

  it("takes a reason of printable characters, accents and emoji included", () => {
    const answer = { decision: "denied", approverId: "app:user", reason: "pas vers Émile 🙅 (ask me tomorrow)" };
    expect(checkHumanAnswer(answer, NOW)).toBeNull();
  });

  it("refuses a window whose end names no time zone (it would be read as local time)", () => {
    expect(isApprovalScope({ until: "2026-01-15T12:10:00" })).toBe(false);
    expect(isApprovalScope({ until: "2026-01-15" })).toBe(false);
    expect(isApprovalScope({ until: "Thu, 15 Jan 2026 12:10:00 GMT" })).toBe(false);
    const answer = { decision: "approved", approverId: "cli:alice", scope: { until: "2026-01-15T12:10:00" } };
    expect(checkHumanAnswer(answer, NOW)).toBe("malformed approval scope");
  });

  it("takes a window whose end is an RFC 3339 time with `Z` or an offset", () => {
    expect(isApprovalScope({ until: "2026-01-15T12:10:00Z" })).toBe(true);
    expect(isApprovalScope({ until: "2026-01-15T12:10:00.000Z" })).toBe(true);
    expect(isApprovalScope({ until: "2026-01-15T13:10:00+01:00" })).toBe(true);
    const answer = { decision: "approved", approverId: "cli:alice", scope: { until: "2026-01-15T13:10:00+01:00" } };
    expect(checkHumanAnswer(answer, NOW)).toBeNull();
  });

  it("refuses a window end that does not exist rather than rolling it over", () => {
    expect(isApprovalScope({ until: "2026-02-30T12:00:00Z" })).toBe(false);
  });
});
