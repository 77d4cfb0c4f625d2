/**
 * A Telegram press or webhook callback that reached a node not holding the request (several `acp serve`
 * nodes on one PostgreSQL) is recorded in the shared pending table by `recordForwardedAnswer`, with the
 * channel it came by, for the node that waits; what no longer fits records nothing.
 */
import { afterAll, describe, expect, it } from "vitest";
import { recordForwardedAnswer } from "@acp/server";
import { createPostgresPendingConsentStore, openPostgresStore, type PostgresStore } from "@acp/store";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";

const db = useTestDatabase();
const opened: PostgresStore[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
});

describe("an answer forwarded to the shared PostgreSQL table", () => {
  it("is recorded once, with its channel, when the request still waits; otherwise nothing changes", async () => {
    const store = await openPostgresStore(db.url);
    opened.push(store);
    const pending = createPostgresPendingConsentStore(store);
    const id = `cr_${"5".repeat(32)}`;
    const now = Date.now();
    await pending.insert({
      id,
      nonce: "nonce-of-the-request",
      sessionId: "ci_bot/s1",
      server: "http",
      tool: "write_file",
      request: { id, action: { tool: "write_file", parameters: { path: "/tmp/pg" } } },
      reasons: [],
      createdAtMs: now,
      expiresAtMs: now + 60_000,
    });
    const press = {
      decision: "approved" as const,
      approverId: "telegram:4242",
      channel: "telegram",
      scope: "once" as const,
    };
    expect(await recordForwardedAnswer(pending, id, press, "another-nonce", new Date())).toBe(false);
    expect(await recordForwardedAnswer(pending, `cr_${"6".repeat(32)}`, press, undefined, new Date())).toBe(false);
    expect((await pending.get(id))?.status).toBe("pending");
    expect(await recordForwardedAnswer(pending, id, press, "nonce-of-the-request", new Date())).toBe(true);
    const row = await pending.get(id);
    expect(row?.status).toBe("approved");
    expect(row?.answer).toMatchObject({ decision: "approved", approver: "telegram:4242", channel: "telegram" });
    // a second press, from any node, records nothing
    const again = { ...press, decision: "denied" as const };
    expect(await recordForwardedAnswer(pending, id, again, undefined, new Date())).toBe(false);
    expect((await pending.get(id))?.status).toBe("approved");
  });
});
