/** The expiry sweep's spent-nonce prune, on a service's stores (SQLite here, PostgreSQL under `postgres/`). */
import { expect, it } from "vitest";
import type { ServerStores } from "@acp/server";
import { SPENT_NONCE_KEEP_MS } from "@acp/store";
import { startExpirySweep } from "../src/service/expiry-sweep.js";
import { leftBehindRow } from "./pending-rows.js";

const NOW = Date.parse("2026-04-02T10:00:00Z");
const LONG_AGO = NOW - SPENT_NONCE_KEEP_MS - 10 * 60_000;

/** `open(clock)` opens the stores; `isSpent` reads the spent-nonce table of the same state. */
export function itPrunesSpentNonces(
  open: (clock: () => Date) => Promise<ServerStores>,
  isSpent: (nonce: string) => Promise<boolean>,
): void {
  it("the expiry sweep forgets nonces spent over a day after their approval ended, and keeps the rest", async () => {
    let now = LONG_AGO;
    const clock = (): Date => new Date(now);
    const stores = await open(clock);
    const held = "cr_00000000000000000000000000000h01";
    await stores.pending.insert(leftBehindRow(held, LONG_AGO + 60_000));
    await stores.pending.decide(
      held,
      "approved",
      { decision: "approved", approver: "api:ops", nonce: `n_${held}` },
      now,
    );
    expect(await stores.nonces.spend(`n_${held}`, held, LONG_AGO + 60_000)).toBe(true); // its call used it
    expect(await stores.nonces.spend("n_gone", "cr_gone", LONG_AGO + 60_000)).toBe(true); // no row carries it
    expect(await stores.nonces.spend("n_fresh", "cr_fresh", NOW + 60_000)).toBe(true); // a day-long approval
    now = NOW; // no spend since: what goes, the sweep prunes

    const sweep = startExpirySweep({ stores, audit: { record: () => undefined }, clock });
    expect(await sweep.sweep()).toEqual([]); // nothing to conclude: the answered request's nonce is still spent
    await sweep.stop();
    expect(await isSpent("n_gone")).toBe(false);
    expect(await isSpent(`n_${held}`)).toBe(true);
    expect(await isSpent("n_fresh")).toBe(true);
  });
}
