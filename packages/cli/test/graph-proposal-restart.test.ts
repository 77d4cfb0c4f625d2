/**
 * A consent-graph proposal's cooling period survives a restart: `acp proxy`'s decisions (the in-process
 * guard's too) keep when ACP first saw each proposal in the home's `state.db`, so a proposal back-dated with
 * `proposed_at` is still cooling after the process starts again.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ActionRequest } from "@acp/core";
import { createPipelineDecide } from "../src/wiring/decide.js";
import { openHomeState } from "../src/wiring/home-state.js";

const T0 = new Date("2026-01-15T12:00:00.000Z");
const HOUR = 3_600_000;
const at = (ms: number): Date => new Date(T0.getTime() + ms);

const GRAPH = {
  self_modification: {
    autonomous: [],
    requires_approval: ["update_lessons_md"],
    blocked: [],
    cooling_period_hours: 2,
    undo_window_days: 7,
    require_diff: true,
  },
};

/** Claims to be three hours old: by its own word past its two-hour cooling period. */
const BACKDATED: ActionRequest = {
  tool: "update_lessons",
  server: "memory",
  arguments: { file: "lessons.md" },
  graph: {
    domain: "self_modification",
    action: "update_lessons_md",
    confidence: 1,
    proposal: { diff: "-be terse\n+be concise", undo: "restore the line", proposed_at: at(-3 * HOUR).toISOString() },
  },
};

const home = mkdtempSync(join(tmpdir(), "acp-proposal-restart-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\n');
writeFileSync(join(home, "consent-graph.json"), JSON.stringify(GRAPH));

/** One run of the process: its decide, on the home's state, closed afterwards. */
async function decideOnce(request: ActionRequest, now: Date) {
  const state = openHomeState(home);
  try {
    const decide = createPipelineDecide({
      state,
      policyPath: join(home, "policy.yml"),
      policyIsDefault: false,
      graph: {},
      now: () => now,
      log: () => undefined,
    });
    return await decide(request);
  } finally {
    state.close();
  }
}

describe("a proposal's first sight is kept in state.db", () => {
  it("a back-dated proposal is still cooling after a restart: the period counts from the first sight", async () => {
    const first = await decideOnce(BACKDATED, T0);
    expect([first.route, first.reasons[0]?.code]).toEqual(["refuse", "cooling_period"]);
    // the process restarts an hour later: before, its new ledger had never seen the proposal and took its
    // proposed_at (three hours ago) at its word
    const restarted = await decideOnce(BACKDATED, at(HOUR));
    expect([restarted.route, restarted.reasons[0]?.code]).toEqual(["refuse", "cooling_period"]);
    expect(restarted.reasons[0]?.message).toContain(`cannot take effect before ${at(2 * HOUR).toISOString()}`);
    expect((await decideOnce(BACKDATED, at(2 * HOUR))).route).toBe("accept");
  });
});
