/**
 * `acp serve` takes a consent-graph proposal with `POST /v1/decide` (`graph.proposal`: its diff, how to undo
 * it, when it was proposed), judged with the stores' proposal ledger as `acp serve` builds its pipelines: a
 * proposal missing what its domain requires is BLOCKED naming it; a complete one waits out its cooling
 * period from ACP's first sight (a back-dated `proposed_at` shortens nothing); a malformed one is 400 and
 * nothing is decided or recorded. Before, the body schema refused any `graph.proposal` with a 400.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPipeline, graphSource, parseConsentGraph, type ConsentGraph, type ProposalLedger } from "@acp/core";
import type { EmbeddedServer, StoresPipeline } from "@acp/server";
import { at, openTestServerAt, readJson } from "./harness.js";
import { decideAt } from "./trusted-channel.js";

function graphOf(raw: unknown): ConsentGraph {
  const parsed = parseConsentGraph(JSON.stringify(raw));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.value;
}

/** Changing the agent's own prompt needs a person, a diff, an undo, and two hours' cooling. */
const GRAPH = graphOf({
  self_modification: {
    autonomous: [],
    requires_approval: ["update_prompt"],
    blocked: [],
    cooling_period_hours: 2,
    undo_window_days: 7,
    require_diff: true,
  },
});
const TARGET = { domain: "self_modification", action: "update_prompt" };
const CALL = { tool: "update_prompt", arguments: { section: "tone" } };
const DIFF = "- be terse\n+ be friendly";
const UNDO = "restore the previous prompt from the prompt history";

const pipeline: StoresPipeline = (_rateLimiter, proposals?: ProposalLedger) =>
  createPipeline([graphSource({ graph: GRAPH, context: proposals !== undefined ? { proposals } : {} })]);

let home: string;
let node: EmbeddedServer;
let url: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-graph-proposal-"));
  ({ node, url } = await openTestServerAt(home, { pipeline, anyServerPipeline: pipeline }));
});
afterAll(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

async function decided(proposal: unknown): Promise<{ route: unknown; codes: unknown[]; answer: unknown }> {
  const res = await decideAt(url, { ...CALL, graph: { ...TARGET, proposal } });
  expect(res.status).toBe(200);
  const answer = await readJson(res);
  const reasons = at(answer, "decision", "reasons") as { code: unknown }[];
  return { route: at(answer, "route"), codes: reasons.map((r) => r.code), answer };
}

describe("a consent-graph proposal sent to acp serve", () => {
  it("is blocked for what its domain requires and it lacks: the diff, the undo, the time it was proposed", async () => {
    expect(await decided({})).toMatchObject({ route: "refuse", codes: ["diff_required"] });
    // a description is no diff
    expect(await decided({ diff: "make it friendlier", undo: UNDO })).toMatchObject({ codes: ["diff_required"] });
    expect(await decided({ diff: DIFF })).toMatchObject({ route: "refuse", codes: ["undo_required"] });
    expect(await decided({ diff: DIFF, undo: UNDO })).toMatchObject({
      route: "refuse",
      codes: ["proposed_at_required"],
    });
  });

  it("waits out its cooling period from ACP's first sight, even when back-dated", async () => {
    const now = new Date().toISOString();
    const cooling = await decided({ diff: DIFF, undo: UNDO, proposed_at: now });
    expect(cooling.route).toBe("refuse");
    expect(cooling.codes).toContain("cooling_period");
    // the same change claimed to be three hours old: still cooling, counted from when ACP first saw it
    const backdated = new Date(Date.now() - 3 * 3600_000).toISOString();
    const again = await decided({ diff: DIFF, undo: UNDO, proposed_at: backdated });
    expect(again.route).toBe("refuse");
    expect(again.codes).toEqual(expect.arrayContaining(["cooling_period", "proposed_at_mismatch"]));
  });

  it("is 400 when malformed, naming the proposal, never judged", async () => {
    const bad: unknown[] = [
      "a diff",
      { diff: DIFF, undo: UNDO, approved: true },
      { diff: 7 },
      { diff: DIFF, undo: UNDO, proposed_at: "yesterday" },
      { diff: DIFF, undo: UNDO, proposed_at: "2026-11-29 14:00" },
      { diff: "x".repeat(65_537) },
      { diff: `${DIFF}\u0000`, undo: UNDO },
    ];
    for (const proposal of bad) {
      const res = await decideAt(url, { ...CALL, graph: { ...TARGET, proposal } });
      expect([JSON.stringify(proposal).slice(0, 60), res.status]).toEqual([JSON.stringify(proposal).slice(0, 60), 400]);
      const body = (await readJson(res)) as { error?: { message?: string } };
      expect(JSON.stringify(body)).toContain("proposal");
    }
  });
});
