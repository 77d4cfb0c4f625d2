import { userInfo } from "node:os";
import { describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { ID_A, ID_B, seedPending, statusOf, tempHome } from "./pending-fixtures.js";

describe("acp deny", () => {
  it("records a denial with its reason, once", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_A });
    const out = await runCli(["deny", ID_A, "--reason", "wrong recipient"], { env: { ACP_HOME: home, USER: "alice" } });
    expect(out).toMatchObject({ code: 0, stdout: `denied ${ID_A}\n` });
    expect(statusOf(home, ID_A)).toMatchObject({
      status: "denied",
      answer: { reason: "wrong recipient", approver: "cli:alice" },
    });
    const again = await runCli(["deny", ID_A], { env: { ACP_HOME: home } });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("already denied");
  });

  it("names the account that answered when USER and LOGNAME are not set (a container, a service), not `cli:unknown`", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_A });
    const out = await runCli(["deny", ID_A], { env: { ACP_HOME: home } });
    expect(out.code).toBe(0);
    expect(statusOf(home, ID_A)).toMatchObject({ answer: { approver: `cli:${userInfo().username}` } });
  });

  it("refuses an unknown id (exit 4) and an expired request (exit 3), changing nothing", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_B, expiresAt: "2026-01-15T11:59:30Z" });
    const unknown = await runCli(["deny", ID_A], { env: { ACP_HOME: home } });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain(`no pending consent request \`${ID_A}\``);
    const expired = await runCli(["deny", ID_B], { env: { ACP_HOME: home } });
    expect(expired.code).toBe(3);
    expect(expired.stderr).toContain("has expired");
    expect(statusOf(home, ID_B)).toMatchObject({ status: "pending" });
  });

  it("refuses a reason with a control, invisible or bidirectional character (exit 4), nothing recorded", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_A });
    for (const reason of ["wrong\u001b[2K\rok", "wrong\u200brecipient", "wrong \u202etneipicer", "wrong\nrecipient"]) {
      const out = await runCli(["deny", ID_A, "--reason", reason], { env: { ACP_HOME: home } });
      expect(out.code).toBe(4);
      expect(out.stderr).toMatch(/reason: `[^`]*\\u[0-9a-f]{4}[^`]*` holds a control, invisible or bidirectional/);
      expect(statusOf(home, ID_A)).toMatchObject({ status: "pending" });
    }
  });

  it("refuses a malformed id with exit 4", async () => {
    const out = await runCli(["deny", "cr_'; DROP TABLE x"], { env: { ACP_HOME: tempHome() } });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("invalid consent request id");
  });
});
