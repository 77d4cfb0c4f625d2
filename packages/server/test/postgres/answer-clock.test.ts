/**
 * `acp approve` from a machine that is not a node (the pending table alone): its clock reads the request's
 * expiry and turns `--for 10m` into the window's end. Before, one a minute behind approved a request that
 * had expired, and one an hour ahead gave a window ending an hour late. Now an approval from a clock more
 * than 2 s from the database's is refused (`postgres_clock_skew`) and nothing is recorded; a denial stands.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answerConsent, openPendingConsent, openPostgresStores, type ServerStores } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";

const db = useTestDatabase();
const dirs: string[] = [];
const opened: { close(): Promise<void> }[] = [];

afterAll(async () => {
  for (const s of opened) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function request(id: string, createdAtMs: number, expiresAtMs: number) {
  return {
    id,
    nonce: `n_${id}`,
    server: "mail",
    tool: "send_email",
    request: { id, action: { tool: "send_email" } },
    reasons: [],
    createdAtMs,
    expiresAtMs,
  };
}

describe("acp approve on PostgreSQL from a machine whose clock is off", () => {
  it("refuses an approval, records nothing, and lets a denial through", async () => {
    const stores: ServerStores = await openPostgresStores({ url: db.url, clock: () => new Date() });
    opened.push(stores);
    const now = Date.now();
    // expired a second ago on the database's clock
    await stores.pending.insert(request("cr_expired", now - 60_000, now - 1_000));
    await stores.pending.insert(request("cr_live", now, now + 60_000));
    await stores.pending.insert(request("cr_deny", now, now + 60_000));
    const dir = mkdtempSync(join(tmpdir(), "acp-answer-clock-"));
    dirs.push(dir);
    const handle = await openPendingConsent({ storageUrl: db.url, statePath: join(dir, "state.db") });
    if (handle === null) throw new Error("no pending table");
    opened.push(handle);

    // a minute behind: the expired request still looked open to it
    const behind = new Date(Date.now() - 60_000);
    await expect(
      answerConsent(handle.store, "cr_expired", { decision: "approved" }, "cli:tester", behind),
    ).rejects.toMatchObject({
      code: "postgres_clock_skew",
      message: expect.stringMatching(/^this machine's clock is (59|60)\.\ds behind the database's/) as unknown,
    });
    // an hour ahead: `--for 10m` would end an hour and ten minutes from now
    const ahead = new Date(Date.now() + 3_600_000);
    await expect(
      answerConsent(handle.store, "cr_live", { decision: "approved", scope: { for: "10m" } }, "cli:tester", ahead),
    ).rejects.toMatchObject({ code: "postgres_clock_skew" });
    expect((await stores.pending.get("cr_expired"))?.status).toBe("pending");
    expect((await stores.pending.get("cr_live"))?.status).toBe("pending");

    // a denial only refuses: it is not held up by the clock
    await answerConsent(handle.store, "cr_deny", { decision: "denied" }, "cli:tester", behind);
    expect((await stores.pending.get("cr_deny"))?.status).toBe("denied");
    // a clock in step approves
    await answerConsent(handle.store, "cr_live", { decision: "approved" }, "cli:tester", new Date());
    expect((await stores.pending.get("cr_live"))?.status).toBe("approved");
  });
});
