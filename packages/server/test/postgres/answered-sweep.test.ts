/**
 * A node dies while its call waits; its request stays listed on every node, and a person answers it on
 * another node. Nobody completes it. Before, the row was `approved` (or `denied`) for good, the expiry sweep
 * (pending rows only) skipped it, and the chain held the request's `consent_requested` and nothing after:
 * the person's answer was in no audit event, and a completion days later could still take the approval.
 * Now every node's sweep concludes such a request once its expiry is a minute past: the node that spends
 * its nonce — exactly one, however many sweep at once — records the answer (`consent_expired` with
 * `answered: approved`, or `consent_denied`), `unattended: true`. A request whose waiting call used its
 * answer (nonce spent) is left alone.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStores, type ServerStores } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { startExpirySweep } from "../../src/service/expiry-sweep.js";
import { leftBehindRow } from "../pending-rows.js";

const db = useTestDatabase();
const opened: ServerStores[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
});

const NOW = Date.now();
const clock = (): Date => new Date(NOW);

async function node(): Promise<ServerStores> {
  const stores = await openPostgresStores({ url: db.url, clock, onError: () => undefined });
  opened.push(stores);
  return stores;
}

describe("a request answered after its node died, and never completed", () => {
  it("is concluded by exactly one of the nodes sweeping at once, with the person's answer recorded", async () => {
    const [a, b] = await Promise.all([node(), node()]);
    const ids = Array.from({ length: 6 }, (_, i) => `cr_0000000000000000000000000000a${i.toString().padStart(3, "0")}`);
    const used = "cr_00000000000000000000000000000u01";
    const open = "cr_00000000000000000000000000000u02";
    const at = NOW - 6 * 60_000; // answered in time
    for (const [i, id] of [...ids, used].entries()) {
      await a.pending.insert(leftBehindRow(id, NOW - 5 * 60_000));
      const denied = i % 2 === 1;
      const answer = { decision: denied ? "denied" : "approved", approver: "api:ops", nonce: `n_${id}`, reason: "no" };
      expect(await b.pending.decide(id, denied ? "denied" : "approved", answer, at)).toMatchObject({ ok: true });
    }
    expect(await a.nonces.spend(`n_${used}`, used, NOW)).toBe(true); // its waiting call used the approval
    await a.pending.insert(leftBehindRow(open, NOW + 60_000)); // answered, not yet expired: its call may still take it
    await b.pending.decide(open, "approved", { decision: "approved", approver: "api:ops", nonce: `n_${open}` }, NOW);

    const recorded: { type: string; fields: Record<string, unknown> }[] = [];
    const audit = { record: (type: string, fields: Record<string, unknown>) => void recorded.push({ type, fields }) };
    const sweeps = [a, b].map((stores) => startExpirySweep({ stores, audit, clock }));
    // each node sweeps once it starts (what sweep() answers here): both at the same moment
    const concluded = (await Promise.all(sweeps.map((s) => s.sweep()))).flat();
    await Promise.all(sweeps.map((s) => s.stop()));

    expect(concluded.sort()).toEqual([...ids].sort()); // each once, across both nodes
    expect(recorded.map((r) => r.fields["request_id"]).sort()).toEqual([...ids].sort());
    for (const r of recorded) {
      const i = ids.indexOf(r.fields["request_id"] as string);
      expect(r.type).toBe(i % 2 === 1 ? "consent_denied" : "consent_expired");
      expect(r.fields["metadata"]).toMatchObject({ unattended: true, approver: "api:ops" });
    }
    expect(await b.nonces.spend(`n_${open}`, open, NOW + 60_000)).toBe(true); // left to its waiting call
  });
});
