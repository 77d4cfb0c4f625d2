/**
 * A person's answer recorded in the table in time, whose wake-up had not reached the waiting call when its
 * time ran out: the person was told "approved" (200), and the call ended expired. The table channel's
 * `lastLook` now gives the broker that answer, with when it was given, before the request is concluded.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ConsentRequestV02 } from "@acp/proxy";
import { createTableChannel, openSqliteStores } from "@acp/server";
import { leftBehindRow, tempHomes } from "./pending-rows.js";

const homes = tempHomes("acp-last-look-");

const NOW = Date.parse("2026-03-02T10:00:00Z");

describe("the table channel's last look at an expiring request", () => {
  it("finds an answer given in time and not yet read, with its time; nothing when none, or another's", async () => {
    const home = homes.home();
    const clock = (): Date => new Date(NOW);
    const stores = await openSqliteStores({
      statePath: join(home, "state.db"),
      auditPath: join(home, "audit.jsonl"),
      clock,
    });
    homes.keep(stores);
    const channel = createTableChannel({ stores, clock });
    const ids = ["cr_000000000000000000000000000000a1", "cr_000000000000000000000000000000a2"];
    const requests = ids.map((id) => {
      const row = leftBehindRow(id, NOW + 60_000);
      return { row, request: { id, nonce: row.nonce, expires_at: new Date(NOW + 60_000).toISOString() } };
    });
    for (const { row } of requests) await stores.pending.insert(row);
    const [a, b] = requests as [(typeof requests)[0], (typeof requests)[0]];
    expect(await channel.lastLook?.(a.request as unknown as ConsentRequestV02)).toBeUndefined();
    const record = { decision: "approved", approver: "api:alice", nonce: a.row.nonce };
    expect((await stores.pending.decide(a.row.id, "approved", record, NOW + 59_000)).ok).toBe(true);
    expect(await channel.lastLook?.(a.request as unknown as ConsentRequestV02)).toEqual({
      answer: { decision: "approved", approverId: "api:alice" },
      atMs: NOW + 59_000,
    });
    // an answer bound to another request's nonce is none
    const foreign = { decision: "approved", approver: "api:mallory", nonce: a.row.nonce };
    expect((await stores.pending.decide(b.row.id, "approved", foreign, NOW + 1_000)).ok).toBe(true);
    expect(await channel.lastLook?.(b.request as unknown as ConsentRequestV02)).toBeUndefined();
  });
});
