import { describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { ID_A, ID_B, seedPending, tempHome } from "./pending-fixtures.js";

describe("acp pending", () => {
  it("says so when nothing waits, even without a state.db", async () => {
    const home = tempHome();
    const out = await runCli(["pending"], { env: { ACP_HOME: home } });
    expect(out).toMatchObject({ code: 0, stdout: "no pending consent requests\n" });
    expect(JSON.parse((await runCli(["pending", "--json"], { env: { ACP_HOME: home } })).stdout)).toEqual([]);
  });

  it("prints a JSON array with id, server, tool, redacted arguments, reasons and expires_at", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_A });
    seedPending(home, { id: ID_B, expiresAt: "2026-01-15T11:59:30Z" });
    const out = await runCli(["pending", "--json"], { env: { ACP_HOME: home } });
    expect(out.code).toBe(0);
    const list = JSON.parse(out.stdout) as Record<string, unknown>[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: ID_A,
      server: "mail",
      tool: "send_email",
      arguments: { to: "bob@example.com", smtp_password: "[redacted]" },
      reasons: [{ code: "rule_matched" }],
      expires_at: "2026-01-15T12:05:00.000Z",
      risk_level: "high",
    });
  });

  it("lists requests for a person, one block each", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_A });
    const out = await runCli(["pending"], { env: { ACP_HOME: home } });
    expect(out.stdout).toContain(`${ID_A}  mail/send_email  expires 2026-01-15T12:05:00.000Z`);
    expect(out.stdout).toContain("rule `ask-mail` asks before mail");
    expect(out.stdout).toContain("[redacted]");
  });
});
