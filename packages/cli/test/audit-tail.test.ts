import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog } from "@acp/store";
import { followAuditFile } from "../src/commands/audit-tail.js";
import { runCli } from "./run.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function logWith(n: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
  dirs.push(dir);
  const path = join(dir, "audit.jsonl");
  let t = Date.UTC(2026, 0, 15);
  const log = await openAuditLog(path, { clock: () => new Date(t++) });
  for (let i = 0; i < n; i++) {
    await log.append({ event_type: "policy_evaluated", tool: `tool_${i}`, decision: "ask", policy_rule: "r1" });
  }
  await log.close();
  return path;
}

describe("acp audit tail", () => {
  it("prints the last N events readably", async () => {
    const path = await logWith(5);
    const out = await runCli(["audit", "tail", "-n", "2", path]);
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^2026-01-15T00:00:00\.003Z\s+policy_evaluated\s+tool_3\s+ask\s+rule=r1$/);
    expect(lines[1]).toContain("tool_4");
  });

  it("prints raw JSONL with --json", async () => {
    const path = await logWith(3);
    const out = await runCli(["audit", "tail", "--json", path]);
    const lines = out.stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2] ?? "")).toMatchObject({ tool: "tool_2", type: "audit_event" });
  });

  it("defaults to $ACP_HOME/audit.jsonl and rejects a bad count", async () => {
    const path = await logWith(1);
    const home = join(path, "..");
    expect((await runCli(["audit", "tail"], { env: { ACP_HOME: home } })).stdout).toContain("tool_0");
    expect((await runCli(["audit", "tail", "-n", "x"], { env: { ACP_HOME: home } })).code).toBe(2);
    expect((await runCli(["audit", "tail"], { env: { ACP_HOME: join(home, "missing") } })).code).toBe(1);
  });

  it("follows appended events until stopped", async () => {
    const path = await logWith(1);
    const seen: string[] = [];
    const controller = new AbortController();
    const following = followAuditFile(path, (l) => seen.push(l), {
      from: 0,
      signal: controller.signal,
      intervalMs: 10,
    });
    const log = await openAuditLog(path, { clock: () => new Date(Date.UTC(2026, 0, 16)) });
    await log.append({ event_type: "tool_call_completed", tool: "later" });
    await log.close();
    for (let i = 0; i < 500 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await following;
    expect(seen).toHaveLength(2);
    expect(seen[1]).toContain('"tool":"later"');
  });
});
