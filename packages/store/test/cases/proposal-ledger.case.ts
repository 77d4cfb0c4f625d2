import { describe, expect, it } from "vitest";
import {
  createPipeline,
  graphSource,
  parseConsentGraph,
  recordGraphReview,
  type ActionRequest,
  type ProposalLedger,
} from "@acp/core";
import type { ProposalSightingRow } from "../../src/index.js";

/** A stored ledger: records first sights, and lists them for the operator. */
export interface StoredLedger extends ProposalLedger {
  list(limit: number): ProposalSightingRow[] | Promise<ProposalSightingRow[]>;
}

/**
 * What the suite needs of a store: a ledger on a fresh store (`maxEntries` when given), and another ledger on
 * the same store, as a restarted process (or another node) opens it.
 */
export interface LedgerStore {
  readonly ledger: StoredLedger;
  reopen(): StoredLedger | Promise<StoredLedger>;
}

const T0 = new Date("2026-01-15T12:00:00.000Z");
const HOUR = 3_600_000;
const at = (ms: number): Date => new Date(T0.getTime() + ms);

const GRAPH = (() => {
  const parsed = parseConsentGraph(
    JSON.stringify({
      self_modification: {
        autonomous: [],
        requires_approval: ["update_lessons_md"],
        blocked: [],
        cooling_period_hours: 2,
        undo_window_days: 7,
        require_diff: true,
      },
    }),
  );
  if (!parsed.ok) throw new Error("graph");
  return parsed.value;
})();

/** A proposal that claims to be three hours old (past its two-hour cooling period by its own word). */
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

function pipelineOn(ledger: ProposalLedger) {
  const reviews = recordGraphReview(undefined, GRAPH, [], T0);
  if (!reviews.ok) throw new Error("review");
  return createPipeline([graphSource({ graph: GRAPH, context: { reviews: reviews.value, proposals: ledger } })]);
}

/** The shared suite every stored proposal ledger passes: SQLite and PostgreSQL. */
export function describeProposalLedger(name: string, open: (maxEntries?: number) => Promise<LedgerStore>): void {
  describe(`proposal ledger: ${name}`, () => {
    it("records the first sight and answers it to every later call", async () => {
      const { ledger } = await open();
      expect((await ledger.firstSeen("sha256:a", T0)).toISOString()).toBe(T0.toISOString());
      expect((await ledger.firstSeen("sha256:a", at(HOUR))).toISOString()).toBe(T0.toISOString());
      expect((await ledger.firstSeen("sha256:b", at(HOUR))).toISOString()).toBe(at(HOUR).toISOString());
    });

    it("a ledger opened again on the same store (a restart, another node) counts from the first sight", async () => {
      const store = await open();
      await store.ledger.firstSeen("sha256:a", T0);
      const again = await store.reopen();
      expect((await again.firstSeen("sha256:a", at(5 * HOUR))).toISOString()).toBe(T0.toISOString());
    });

    it("a back-dated proposal stays in its cooling period after a restart: it counts from the first sight", async () => {
      const store = await open();
      const first = await pipelineOn(store.ledger).decide(BACKDATED, T0);
      expect(first.route).toBe("refuse");
      expect(first.reasons[0]?.code).toBe("cooling_period");
      // the process restarts an hour later: a new pipeline, a new ledger on the same store
      const restarted = pipelineOn(await store.reopen());
      const later = await restarted.decide(BACKDATED, at(2 * HOUR - 1));
      expect(later.route).toBe("refuse");
      expect(later.reasons[0]?.message).toContain(`cannot take effect before ${at(2 * HOUR).toISOString()}`);
      expect((await restarted.decide(BACKDATED, at(2 * HOUR))).route).toBe("accept");
    });

    it("keeps what the operator needs to see the proposal, newest first", async () => {
      const { ledger } = await open();
      await pipelineOn(ledger).decide(BACKDATED, T0);
      await ledger.firstSeen("sha256:later", at(HOUR), { domain: "email", action: "send" });
      const rows = await ledger.list(10);
      expect(rows.map((r) => r.domain)).toEqual(["email", "self_modification"]);
      expect(rows[1]).toMatchObject({
        firstSeenMs: T0.getTime(),
        action: "update_lessons_md",
        proposed_at: at(-3 * HOUR).toISOString(),
        diff: "-be terse\n+be concise",
        undo: "restore the line",
        tool: "update_lessons",
        server: "memory",
      });
      expect(rows[1]?.key).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(await ledger.list(1)).toHaveLength(1);
    });

    it("is bounded: past maxEntries the oldest first sights are forgotten (they start again)", async () => {
      const { ledger } = await open(2);
      await ledger.firstSeen("sha256:1", at(1));
      await ledger.firstSeen("sha256:2", at(2));
      await ledger.firstSeen("sha256:3", at(3));
      expect((await ledger.list(10)).map((r) => r.key)).toEqual(["sha256:3", "sha256:2"]);
      expect((await ledger.firstSeen("sha256:1", at(4))).getTime()).toBe(at(4).getTime());
    });

    it("records one first sight when many calls race for a new proposal", async () => {
      const { ledger } = await open();
      const seen = await Promise.all(
        Array.from({ length: 10 }, (_, i) => Promise.resolve(ledger.firstSeen("sha256:race", at(i)))),
      );
      expect(new Set(seen.map((d) => d.getTime())).size).toBe(1);
      expect(await ledger.list(10)).toHaveLength(1);
    });

    it("refuses an invalid time or key", async () => {
      const { ledger } = await open();
      await expect(Promise.resolve().then(() => ledger.firstSeen("sha256:x", new Date(Number.NaN)))).rejects.toThrow();
      await expect(Promise.resolve().then(() => ledger.firstSeen("", T0))).rejects.toThrow();
    });
  });
}
