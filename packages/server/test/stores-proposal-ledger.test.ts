/**
 * `acp serve` builds its live pipelines on the stores' proposal ledger (`proposal_first_sight` in state.db, or
 * PostgreSQL): a consent-graph proposal's first sight survives a restart of the service.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ProposalLedger, RateLimiter } from "@acp/core";
import { openTestServerAt, pipelineFor } from "./harness.js";

const home = mkdtempSync(join(tmpdir(), "acp-stores-proposal-ledger-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const APPROVER = "approver-token-0123456789abcdef";

/** Opens the service, handing back the ledger its live and any-server pipelines were built on. */
async function open() {
  const handed: (ProposalLedger | undefined)[] = [];
  const build = (_rateLimiter: RateLimiter, proposals?: ProposalLedger) => {
    handed.push(proposals);
    return pipelineFor();
  };
  const { node } = await openTestServerAt(home, { pipeline: build, anyServerPipeline: build, approverToken: APPROVER });
  return { node, handed };
}

describe("the service's proposal ledger", () => {
  it("is the stores', for the live and the any-server pipeline, and keeps a first sight across a restart", async () => {
    const T0 = new Date("2026-01-15T12:00:00.000Z");
    const first = await open();
    expect(first.handed).toEqual([first.node.stores.proposals, first.node.stores.proposals]);
    await first.node.stores.proposals.firstSeen("sha256:p", T0, { domain: "d", action: "a" });
    await first.node.close();
    const again = await open();
    const seen = await again.handed[0]?.firstSeen("sha256:p", new Date("2026-01-15T15:00:00.000Z"));
    expect(seen?.toISOString()).toBe(T0.toISOString());
    await again.node.close();
  });
});
