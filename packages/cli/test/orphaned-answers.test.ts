/**
 * A person answered (acp approve, or a Telegram press relayed into the table) while the acp proxy that
 * asked was still waiting, and the proxy died before it read the answer: the chain held the request's
 * consent_requested and no end for ever — the starting proxy settled only rows still pending. It now
 * concludes such a row too (consent_withdrawn, `answer_unread`), once, and only when the answer was never
 * checked (its nonce unspent): an answer the proxy used, or read and refused, is left alone.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPendingConsentStore, createSqliteNonceStore, openStateDb, type NewPendingConsent } from "@acp/store";
import { settleOrphanedConsent } from "../src/wiring/orphaned-consent.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const T0 = Date.parse("2026-03-02T10:00:00Z");
const row = (id: string): NewPendingConsent => ({
  id,
  nonce: `n_${id}`,
  sessionId: "s1",
  server: "fs",
  tool: "write_file",
  request: { id },
  reasons: [],
  createdAtMs: T0,
  expiresAtMs: T0 + 120_000,
});

describe("a starting acp proxy and the answered requests of a proxy that died", () => {
  it("concludes an answer nobody read, once; leaves an answer that was used; still withdraws pending ones", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-orphaned-answers-"));
    dirs.push(dir);
    const db = openStateDb(join(dir, "state.db"));
    try {
      // a process that has exited (and been reaped): its pid no longer exists
      const gone = { pid: spawnSync(process.execPath, ["-e", ""]).pid ?? 0, host: hostname(), start: null };
      const dead = createPendingConsentStore(db, { owner: gone });
      for (const id of ["cr_pending", "cr_unread", "cr_used"]) dead.insert(row(id));
      const answer = (id: string) => ({ decision: "approved", approver: "cli:alice", nonce: `n_${id}` });
      expect(dead.decide("cr_unread", "approved", answer("cr_unread"), T0 + 1_000).ok).toBe(true);
      expect(dead.decide("cr_used", "approved", answer("cr_used"), T0 + 1_000).ok).toBe(true);
      // the proxy read and checked this one before it died: its nonce is spent
      expect(createSqliteNonceStore(db).spend("n_cr_used", "cr_used", T0 + 120_000)).toBe(true);

      const events: { type: string; fields: Record<string, unknown> }[] = [];
      const audit = { record: (type: string, fields: Record<string, unknown>) => void events.push({ type, fields }) };
      const lines: string[] = [];
      const settle = () =>
        settleOrphanedConsent({ db, audit, now: () => new Date(T0 + 2_000), log: (l) => lines.push(l) });
      expect(await settle()).toBe(2);
      expect(events.map((e) => [e.type, e.fields["request_id"]])).toEqual([
        ["consent_withdrawn", "cr_pending"],
        ["consent_withdrawn", "cr_unread"],
      ]);
      const unread = events[1]?.fields ?? {};
      expect(unread).toMatchObject({ decision: "withdrawn", orphaned: true, answer_unread: "approved" });
      expect(String(unread["reason"])).toMatch(
        /^approved by `cli:alice`, but the acp proxy that asked \(pid \d+ on .+\) stopped before it read the answer: nothing ran$/,
      );
      expect(events[0]?.fields).not.toHaveProperty("answer_unread");
      // once: the next start finds nothing more
      expect(await settle()).toBe(0);
      expect(events).toHaveLength(2);
    } finally {
      db.close();
    }
  });
});
