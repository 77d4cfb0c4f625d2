import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isGuardRefusal, openGuard, type Guard } from "../../src/guard/index.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "../home-fixture.js";
import { runCli } from "../run.js";

const POLICY = `version: "1"
default_action: ask
rules:
  - { id: pay, match: { tool: pay }, action: allow }
  - { id: no-money, match: { tool: wire_* }, action: deny }
`;

const root = tempRoot("guard-audit-after-run");
afterAll(() => root.cleanup());

async function guardOver(lines: string[]): Promise<{ acp: Guard; home: string }> {
  const { home } = fixtureHome(root.dir);
  writeFileSync(join(home, "policy.yml"), POLICY);
  const acp = await openGuard({ home, passphrase: PASSPHRASE, log: (line) => lines.push(line) });
  return { acp, home };
}

/**
 * Makes the home's audit log stop recording while a tool runs: the log file is moved away (the writer
 * refuses a log replaced under it), and a refused call (whose decision is written at once) makes the
 * writer find out before the tool returns.
 */
async function breakTheAudit(acp: Guard, home: string): Promise<void> {
  renameSync(join(home, "audit.jsonl"), join(home, "audit.moved.jsonl"));
  const wire = acp.guard("wire_money", () => "never", { server: "bank" });
  const refused = await wire({}).catch((e: unknown) => e);
  expect(isGuardRefusal(refused) && refused.stop).toBe("audit_failed");
}

describe("openGuard: the audit log fails after the tool ran", () => {
  it("the caller learns the call ran (ran_unaudited, `ran`), not the audit's error, and not the result", async () => {
    const lines: string[] = [];
    const { acp, home } = await guardOver(lines);
    let payments = 0;
    const pay = acp.guard(
      "pay",
      async (args: { amount: number }) => {
        payments += 1;
        await breakTheAudit(acp, home);
        return { paid: args.amount };
      },
      { server: "bank" },
    );
    const error = await pay({ amount: 5 }).catch((e: unknown) => e);
    await acp.close().catch(() => undefined);
    expect(payments).toBe(1);
    expect(isGuardRefusal(error)).toBe(true);
    if (!isGuardRefusal(error)) return;
    expect(error.stop).toBe("ran_unaudited");
    expect(error.ran).toBe(true);
    expect(error.message).toMatch(
      /^the call ran, but it could not be recorded in the audit log \(.+\), so its result is withheld/,
    );
    expect(error.message).toContain("must not be run again");
    expect(error.message).not.toContain("paid");
    expect(lines.some((l) => l.includes("`pay` on `bank` ran, but could not be recorded in the audit log"))).toBe(true);
  });

  it("a tool that threw: still ran_unaudited, not the audit's error in place of the tool's", async () => {
    const lines: string[] = [];
    const { acp, home } = await guardOver(lines);
    const pay = acp.guard(
      "pay",
      async () => {
        await breakTheAudit(acp, home);
        throw new Error("the bank timed out after the transfer");
      },
      { server: "bank" },
    );
    const error = await pay({}).catch((e: unknown) => e);
    await acp.close().catch(() => undefined);
    expect(isGuardRefusal(error) && error.stop).toBe("ran_unaudited");
    expect(isGuardRefusal(error) && error.ran).toBe(true);
  });

  it("a refusal that did not run says so (`ran` false)", async () => {
    const { acp } = await guardOver([]);
    const wire = acp.guard("wire_money", () => "never", { server: "bank" });
    const error = await wire({}).catch((e: unknown) => e);
    await acp.close();
    expect(isGuardRefusal(error) && error.stop).toBe("refused");
    expect(isGuardRefusal(error) && error.ran).toBe(false);
  });
});

describe("openGuard: after the audit log stopped recording, reopen() records again once the log verifies", () => {
  it("says what to do, refuses while the log is missing, and runs again once it is back and verifies", async () => {
    const lines: string[] = [];
    const { acp, home } = await guardOver(lines);
    const pay = acp.guard("pay", (args: { amount: number }) => ({ paid: args.amount }), { server: "bank" });
    expect(await pay({ amount: 1 })).toEqual({ paid: 1 });
    await breakTheAudit(acp, home);
    const refused = await pay({ amount: 2 }).catch((e: unknown) => e);
    expect(isGuardRefusal(refused) && refused.stop).toBe("audit_failed");
    expect((refused as Error).message).toContain("acp audit verify");
    expect((refused as Error).message).toContain("then call the guard's `reopen()`");

    // the log is still away: a new one would start a new chain where it was
    await expect(acp.reopen()).rejects.toThrow(
      /audit\.jsonl` is missing: it was deleted or moved \(put it back\); calls are still refused/,
    );
    expect(isGuardRefusal(await pay({ amount: 3 }).catch((e: unknown) => e))).toBe(true);

    renameSync(join(home, "audit.moved.jsonl"), join(home, "audit.jsonl"));
    await acp.reopen();
    expect(await pay({ amount: 4 })).toEqual({ paid: 4 });
    await acp.close();
    expect(lines.some((l) => l.includes("verifies: calls run again"))).toBe(true);
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"amount":4');
    expect(audit).not.toContain('"amount":3');
    const verified = await runCli(["audit", "verify"], { env: envFor(home) });
    expect(verified.code).toBe(0);
  });

  it("does not reopen a log that was changed: it names the line, and calls stay refused", async () => {
    const { acp, home } = await guardOver([]);
    const pay = acp.guard("pay", (args: { amount: number }) => ({ paid: args.amount }), { server: "bank" });
    const wire = acp.guard("wire_money", () => "never", { server: "bank" });
    expect(isGuardRefusal(await wire({}).catch((e: unknown) => e))).toBe(true); // its refusal is on disk at once
    await breakTheAudit(acp, home);
    const moved = readFileSync(join(home, "audit.moved.jsonl"), "utf8");
    expect(moved).toContain('"tool":"wire_money"');
    writeFileSync(join(home, "audit.jsonl"), moved.replace('"tool":"wire_money"', '"tool":"wire_honey"'));
    await expect(acp.reopen()).rejects.toThrow(/does not verify at line \d+: .*; calls are still refused/);
    const refused = await pay({ amount: 5 }).catch((e: unknown) => e);
    expect(isGuardRefusal(refused) && refused.stop).toBe("audit_failed");
    await acp.close().catch(() => undefined);
  });

  it("reopen() of a closed guard says to open a new one", async () => {
    const { acp } = await guardOver([]);
    await acp.close();
    await expect(acp.reopen()).rejects.toThrow(/the guard is closed: open a new one/);
  });
});
