/**
 * `acp graph review --status` shows the consent-graph proposals in their cooling period: what the proposal
 * ledger in `state.db` recorded (`acp proxy`, `acp serve`), with when each takes effect.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSqliteProposalLedger, openStateDb } from "@acp/store";
import { runCli } from "./run.js";

const T0 = new Date("2026-01-15T12:00:00.000Z");
const HOUR = 3_600_000;
const at = (ms: number): Date => new Date(T0.getTime() + ms);

const home = mkdtempSync(join(tmpdir(), "acp-graph-review-proposals-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
writeFileSync(
  join(home, "consent-graph.json"),
  JSON.stringify({
    email: { autonomous: ["read"], requires_approval: [], blocked: [] },
    self_modification: {
      autonomous: [],
      requires_approval: ["update_lessons_md"],
      blocked: [],
      cooling_period_hours: 2,
    },
  }),
);

describe("acp graph review --status: proposals in their cooling period", () => {
  it("says there is none before anything was recorded (no state.db)", async () => {
    const out = await runCli(["graph", "review", "--status", "--json"], { env: { ACP_HOME: home }, now: T0 });
    expect(out.code).toBe(0);
    expect((JSON.parse(out.stdout) as { proposals: unknown[] }).proposals).toEqual([]);
    const text = await runCli(["graph", "review", "--status"], { env: { ACP_HOME: home }, now: T0 });
    expect(text.stdout).toContain("no proposal in a cooling period");
  });

  it("shows a proposal while it cools, with when it takes effect, its diff, undo and call", async () => {
    const db = openStateDb(join(home, "state.db"));
    createSqliteProposalLedger(db).firstSeen("sha256:" + "0".repeat(64), T0, {
      domain: "self_modification",
      action: "update_lessons_md",
      proposed_at: at(-3 * HOUR).toISOString(),
      diff: "-be terse\n+be concise",
      undo: "restore the line",
      tool: "update_lessons",
      server: "memory",
    });
    db.close();
    const json = await runCli(["graph", "review", "--status", "--json"], { env: { ACP_HOME: home }, now: at(HOUR) });
    expect(json.code).toBe(0);
    const status = JSON.parse(json.stdout) as { proposals: Record<string, unknown>[] };
    expect(status.proposals).toEqual([
      {
        domain: "self_modification",
        action: "update_lessons_md",
        first_seen_at: T0.toISOString(),
        proposed_at: at(-3 * HOUR).toISOString(),
        effective_at: at(2 * HOUR).toISOString(),
        cooling_period_hours: 2,
        tool: "update_lessons",
        server: "memory",
        diff: "-be terse\n+be concise",
        undo: "restore the line",
        key: "sha256:" + "0".repeat(64),
      },
    ]);
    const text = await runCli(["graph", "review", "--status"], { env: { ACP_HOME: home }, now: at(HOUR) });
    expect(text.stdout).toContain("proposals in their cooling period (1):");
    expect(text.stdout).toContain(
      `self_modification.update_lessons_md: takes effect at ${at(2 * HOUR).toISOString()} (first seen ${T0.toISOString()}`,
    );
    expect(text.stdout).toContain("    +be concise\n    undo: restore the line");
    // once it has taken effect it is no longer listed
    const after = await runCli(["graph", "review", "--status", "--json"], {
      env: { ACP_HOME: home },
      now: at(2 * HOUR),
    });
    expect((JSON.parse(after.stdout) as { proposals: unknown[] }).proposals).toEqual([]);
    const none = await runCli(["graph", "review", "--status"], { env: { ACP_HOME: home }, now: at(2 * HOUR) });
    expect(none.stdout).toContain("no proposal in a cooling period");
  });
});
