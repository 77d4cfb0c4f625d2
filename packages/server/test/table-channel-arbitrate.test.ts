/**
 * An answer a Telegram press or a webhook callback brought to a call of acp serve is recorded in the pending
 * table before the broker uses it (`arbitrate`): an answer through the API, the console or acp approve that
 * was recorded first wins over it, and one after it is refused as already decided — one request, one end.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ConsentRequestV02 } from "@acp/proxy";
import { createTableChannel, openSqliteStores } from "@acp/server";
import { leftBehindRow, tempHomes } from "./pending-rows.js";

const homes = tempHomes("acp-arbitrate-");

const NOW = Date.parse("2026-03-02T10:00:00Z");

describe("the table channel records the answers other channels bring", () => {
  it("gives the answer recorded first; records one when none was; refuses when the request is over", async () => {
    const home = homes.home();
    const clock = (): Date => new Date(NOW);
    const stores = homes.keep(
      await openSqliteStores({ statePath: join(home, "state.db"), auditPath: join(home, "audit.jsonl"), clock }),
    );
    const channel = createTableChannel({ stores, clock });
    const ids = ["cr_000000000000000000000000000000b1", "cr_000000000000000000000000000000b2"] as const;
    const requests = ids.map((id) => {
      const row = leftBehindRow(id, NOW + 60_000);
      return { row, request: { id, nonce: row.nonce } as unknown as ConsentRequestV02 };
    });
    for (const { row } of requests) await stores.pending.insert(row);
    const [first, second] = requests as [(typeof requests)[0], (typeof requests)[0]];
    const press = { decision: "approved", scope: "session", approverId: "telegram:42" } as const;

    // the API denied first: the press is not the answer, the denial is, as of when it was given
    const denial = { decision: "denied", approver: "api:bob", nonce: first.row.nonce, reason: "no" };
    expect((await stores.pending.decide(first.row.id, "denied", denial, NOW - 5_000)).ok).toBe(true);
    expect(await channel.arbitrate?.(first.request, press, "telegram", NOW)).toEqual({
      kind: "taken",
      answer: { decision: "denied", approverId: "api:bob", reason: "no", answeredAtMs: NOW - 5_000 },
    });

    // the press first: recorded with the channel it came by; the API's answer after it is refused
    expect(await channel.arbitrate?.(second.request, press, "telegram", NOW)).toEqual({ kind: "recorded" });
    expect(await stores.pending.get(second.row.id)).toMatchObject({
      status: "approved",
      answer: { decision: "approved", approver: "telegram:42", channel: "telegram", scope: "session" },
    });
    const late = { decision: "denied", approver: "api:bob", nonce: second.row.nonce };
    expect(await stores.pending.decide(second.row.id, "denied", late, NOW)).toMatchObject({
      ok: false,
      code: "consent_request_already_decided",
    });

    // a request whose time is over takes no answer
    const ended = leftBehindRow("cr_000000000000000000000000000000b3", NOW + 60_000);
    await stores.pending.insert(ended);
    const endedRequest = { id: ended.id, nonce: ended.nonce } as unknown as ConsentRequestV02;
    expect(await channel.arbitrate?.(endedRequest, press, "telegram", NOW + 61_000)).toMatchObject({ kind: "refused" });
  });
});
