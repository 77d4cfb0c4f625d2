import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog } from "@acp/store";
import { auditLogProblem } from "../../src/guard/audit-reopen.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("the guard's reopen check of the home's audit log", () => {
  it("names a deleted anchor whose marker remains (the log cut back with it), as acp audit verify does", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-guard-reopen-"));
    dirs.push(home);
    const log = join(home, "audit.jsonl");
    const writer = await openAuditLog(log, {
      clock: () => new Date(),
      signer: generateKeyPairSync("ed25519").privateKey,
      checkpointEvery: 2,
    });
    for (let i = 0; i < 4; i++) await writer.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
    await writer.close();
    expect(await auditLogProblem(home)).toBeNull();
    const lines = readFileSync(log, "utf8").split("\n");
    writeFileSync(log, `${lines.slice(0, 3).join("\n")}\n`); // back to the first checkpoint
    rmSync(`${log}.checkpoint`);
    // before 28 Nov 2026: null (the rest verifies), and reopen failed later in the writer's open
    expect(await auditLogProblem(home)).toContain(`records that the log had one: the anchor was deleted`);
  });
});
