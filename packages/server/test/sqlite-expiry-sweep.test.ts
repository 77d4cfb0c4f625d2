/**
 * `acp serve` on SQLite killed while a call waited for a person: its request (a row with no owner — any
 * process of the service may complete it) stayed `pending` in `state.db` for ever after it expired, the
 * chain held its `consent_requested` and nothing after, and no purge could remove it (only settled rows
 * go). The expiry sweep that concludes such requests ran on PostgreSQL only. Now the SQLite stores list
 * them too: the next service on the home settles each as expired and records `consent_expired`
 * (`unattended: true`). Rows an `acp proxy` owns are left to it (and to `settleOrphaned` once it is gone),
 * and a request that expired just now is left to the call still waiting on it.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPendingConsentStore, createSqliteNonceStore, currentOwner, openPendingConsentDb } from "@acp/store";
import type { ConsentRequestV02 } from "@acp/proxy";
import { createTableChannel, openSqliteStores } from "@acp/server";
import { startExpirySweep } from "../src/service/expiry-sweep.js";
import { leftBehindRow, tempHomes } from "./pending-rows.js";

const homes = tempHomes("acp-sqlite-sweep-");

const NOW = Date.parse("2026-03-02T10:00:00Z");

describe("requests a killed acp serve left pending in state.db", () => {
  it("are concluded as expired by the next service and recorded once; proxies' rows and fresh ones are left alone", async () => {
    const home = homes.home();
    const statePath = join(home, "state.db");
    const left = "cr_00000000000000000000000000000s01";
    const fresh = "cr_00000000000000000000000000000s02";
    const proxys = "cr_00000000000000000000000000000s03";
    const db = openPendingConsentDb(statePath);
    createPendingConsentStore(db).insert(leftBehindRow(left, NOW - 5 * 60_000)); // the killed service's
    createPendingConsentStore(db).insert(leftBehindRow(fresh, NOW - 1_000)); // expired a second ago
    createPendingConsentStore(db, { owner: currentOwner() }).insert(leftBehindRow(proxys, NOW - 5 * 60_000)); // a proxy's
    db.close();

    const clock = (): Date => new Date(NOW);
    const stores = await openSqliteStores({ statePath, auditPath: join(home, "audit.jsonl"), clock });
    homes.keep(stores);
    const recorded: { type: string; fields: Record<string, unknown> }[] = [];
    const sweep = startExpirySweep({
      stores,
      audit: { record: (type, fields) => void recorded.push({ type, fields }) },
      clock,
    });
    expect(await sweep.sweep()).toEqual([left]);
    expect(await sweep.sweep()).toEqual([]); // once
    await sweep.stop();

    expect(recorded).toEqual([
      {
        type: "consent_expired",
        fields: expect.objectContaining({
          request_id: left,
          agent: "agent-7",
          decision: "expired",
          metadata: { unattended: true },
        }) as unknown,
      },
    ]);
    expect((await stores.pending.get(left))?.status).toBe("expired");
    expect((await stores.pending.get(fresh))?.status).toBe("pending");
    expect((await stores.pending.get(proxys))?.status).toBe("pending");
  });

  it("conclude a request a person answered after the service died, once: the answer is recorded, no later completion takes it", async () => {
    const home = homes.home();
    const statePath = join(home, "state.db");
    const approved = "cr_00000000000000000000000000000s11";
    const denied = "cr_00000000000000000000000000000s12";
    const completed = "cr_00000000000000000000000000000s13";
    const lapsed = "cr_00000000000000000000000000000s14";
    const db = openPendingConsentDb(statePath);
    const table = createPendingConsentStore(db);
    for (const id of [approved, denied, completed, lapsed]) table.insert(leftBehindRow(id, NOW - 5 * 60_000));
    const at = NOW - 6 * 60_000; // in time
    table.decide(approved, "approved", { decision: "approved", approver: "api:ops", nonce: `n_${approved}` }, at);
    table.decide(
      denied,
      "denied",
      { decision: "denied", approver: "cli:alice", nonce: `n_${denied}`, reason: "no" },
      at,
    );
    table.decide(completed, "approved", { decision: "approved", approver: "api:ops", nonce: `n_${completed}` }, at);
    createSqliteNonceStore(db).spend(`n_${completed}`, completed, NOW - 5 * 60_000); // its waiting call used it
    table.decide(lapsed, "approved", { decision: "approved", approver: "api:ops", nonce: `n_${lapsed}` }, at);
    db.close();

    const clock = (): Date => new Date(NOW);
    const stores = await openSqliteStores({ statePath, auditPath: join(home, "audit.jsonl"), clock });
    homes.keep(stores);
    // this waiting call's expiry came before it read the answer: it ended `expired` (and recorded that)
    const request = { id: lapsed, nonce: `n_${lapsed}`, expires_at: new Date(NOW - 5 * 60_000).toISOString() };
    await createTableChannel({ stores, clock }).settle?.(request as unknown as ConsentRequestV02, "expired");
    const recorded: { type: string; fields: Record<string, unknown> }[] = [];
    const sweep = startExpirySweep({
      stores,
      audit: { record: (type, fields) => void recorded.push({ type, fields }) },
      clock,
    });
    expect((await sweep.sweep()).sort()).toEqual([approved, denied]);
    expect(await sweep.sweep()).toEqual([]);
    await sweep.stop();
    expect(recorded.map((r) => [r.type, r.fields["request_id"], r.fields["metadata"]])).toEqual([
      ["consent_expired", approved, { unattended: true, answered: "approved", approver: "api:ops" }],
      ["consent_denied", denied, { unattended: true, answered: "denied", approver: "cli:alice", reason: "no" }],
    ]);
    // the nonces are spent: a completion that comes now cannot take the approval any more
    expect(await stores.nonces.spend(`n_${approved}`, approved, NOW)).toBe(false);
    expect((await stores.pending.get(approved))?.status).toBe("approved");
  });
});
