/**
 * `acp graph review --status` reads the proposals in their cooling period from `acp serve`'s PostgreSQL
 * database (--storage-url, as `acp pending`), where every node records when it first saw each proposal.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresProposalLedger, openPostgresStore } from "@acp/store";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { runCli } from "../run.js";

const db = useTestDatabase();
const home = mkdtempSync(join(tmpdir(), "acp-graph-proposals-pg-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
writeFileSync(
  join(home, "consent-graph.json"),
  JSON.stringify({
    self_modification: {
      autonomous: [],
      requires_approval: ["update_lessons_md"],
      blocked: [],
      cooling_period_hours: 2,
    },
  }),
);

const T0 = new Date("2026-01-15T12:00:00.000Z");

describe("acp graph review --status --storage-url", () => {
  it("lists a proposal a node of acp serve recorded, with when it takes effect", async () => {
    const store = await openPostgresStore(db.url);
    try {
      await createPostgresProposalLedger(store).firstSeen("sha256:p", T0, {
        domain: "self_modification",
        action: "update_lessons_md",
        proposed_at: "2026-01-15T11:00:00Z",
        diff: "-a\n+b",
      });
    } finally {
      await store.close();
    }
    const out = await runCli(["graph", "review", "--status", "--json", "--storage-url", db.url], {
      env: { ACP_HOME: home, HOME: home },
      now: new Date("2026-01-15T13:00:00Z"),
    });
    expect([out.code, out.stderr]).toEqual([0, ""]);
    const status = JSON.parse(out.stdout) as { proposals: { effective_at: string; diff: string }[] };
    expect(status.proposals).toMatchObject([{ effective_at: "2026-01-15T14:00:00.000Z", diff: "-a\n+b" }]);
  });
});
