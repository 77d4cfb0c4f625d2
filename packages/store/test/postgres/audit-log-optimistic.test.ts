/**
 * The PostgreSQL audit chain with `optimistic: true` (one INSERT without the lock while this log wrote the
 * head last): the shared audit-log suite, and two nodes appending at once still make one verifiable chain.
 */
import { generateKeyPairSync } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { verifyAuditChain } from "@acp/core";
import {
  createPostgresAuditLog,
  openPostgresStore,
  readPostgresAuditLines,
  type PostgresStore,
} from "../../src/index.js";
import { describeAuditLog } from "../cases/audit-log.case.js";
import { useTestDatabase } from "./test-database.js";

const db = useTestDatabase();
const stores: PostgresStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
});

async function open(name: string): Promise<PostgresStore> {
  const store = await openPostgresStore(db.url, { applicationName: name });
  stores.push(store);
  return store;
}

async function lines(store: PostgresStore): Promise<string[]> {
  const all: string[] = [];
  for await (const line of readPostgresAuditLines(store)) all.push(line);
  return all;
}

let shared: PostgresStore | undefined;
describeAuditLog("postgres optimistic", async (options) => {
  shared ??= await open("audit-optimistic");
  const opened = shared;
  await opened.query("TRUNCATE acp_audit_events");
  return { log: createPostgresAuditLog(opened, { ...options, optimistic: true }), lines: () => lines(opened) };
});

describe("postgres audit log, optimistic", () => {
  it("two optimistic nodes appending at once keep one verifiable chain with every event", async () => {
    const [a, b] = [await open("optimistic-a"), await open("optimistic-b")];
    await a.query("TRUNCATE acp_audit_events");
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const options = { clock: () => new Date(), signer: privateKey, checkpointEvery: 7, maxBatch: 4, optimistic: true };
    const logA = createPostgresAuditLog(a, options);
    const logB = createPostgresAuditLog(b, options);
    const events = [];
    for (let round = 0; round < 10; round++) {
      const appends = Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? logA : logB).append({ event_type: "policy_evaluated", request_id: `r${round}_${i}` }),
      );
      events.push(...(await Promise.all(appends)));
    }
    await Promise.all([logA.close(), logB.close()]);
    const all = await lines(a);
    const verified = verifyAuditChain(all, { publicKey });
    expect(verified.problem).toBeNull();
    const ids = new Set(all.map((l) => (JSON.parse(l) as { id: string }).id));
    expect(events).toHaveLength(120);
    for (const e of events) expect(ids.has(e.id)).toBe(true);
  });
});
