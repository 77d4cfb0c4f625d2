import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AuditEventInput } from "@acp/core";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog, type AuditLog } from "../../src/audit/index.js";
import { COMMIT_AT_EVENTS } from "../../src/audit/commit-delay.js";
import { keyPair, readEvents, readLines, steppingClock, tempHomes, verifyFile } from "./audit-fixture.js";

const homes = tempHomes();
afterAll(homes.cleanup);

// A delay no test outlives: a commit that starts before its end was started by something else.
const FOREVER = 10 * 60_000;

const event = (i: number): AuditEventInput => ({ event_type: "tool_call_forwarded", metadata: { i } });

async function open(options: { signer?: boolean } = {}): Promise<{ log: AuditLog; path: string }> {
  const path = join(homes.make(), "audit.jsonl");
  const keys = keyPair();
  const log = await openAuditLog(path, {
    clock: steppingClock(),
    fsync: "batch",
    commitDelayMs: FOREVER,
    ...(options.signer === true ? { signer: keys.privateKey } : {}),
  });
  return { log, path };
}

/** Whether a promise has settled after the event loop ran for a while. */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  return settled;
}

/** The `i` of each event line, in file order. */
const written = (path: string): unknown[] =>
  existsSync(path) ? readEvents(path).map((e) => (e.metadata as { i?: unknown }).i) : [];

describe("commit delay (batch mode)", () => {
  it("keeps a plain append in memory until the delay ends or something else commits", async () => {
    const { log, path } = await open();
    const first = log.append(event(1));
    expect(await settledSoon(first)).toBe(false);
    expect(written(path)).toEqual([]);
    await log.flush();
    expect(await settledSoon(first)).toBe(true);
    expect(written(path)).toEqual([1]);
    await log.close();
  });

  it("commits an urgent append at once, with every event queued before it, in order", async () => {
    const { log, path } = await open();
    const plain = [log.append(event(1)), log.append(event(2))];
    const urgent = await log.append(event(3), { urgent: true });
    expect(urgent.metadata).toEqual({ i: 3 });
    await Promise.all(plain);
    expect(written(path)).toEqual([1, 2, 3]);
    // the next plain append waits again
    const later = log.append(event(4));
    expect(await settledSoon(later)).toBe(false);
    await log.close();
    expect(written(path)).toEqual([1, 2, 3, 4]);
    expect(verifyFile(path).ok).toBe(true);
  });

  it("a checkpoint and close do not wait for the delay; close writes everything queued", async () => {
    const { log, path } = await open({ signer: true });
    const plain = log.append(event(1));
    const checkpoint = await log.checkpoint();
    expect(checkpoint?.event_type).toBe("checkpoint");
    await plain;
    const more = [log.append(event(2)), log.appendMany([event(3), event(4)])];
    await log.close();
    await Promise.all(more);
    expect(readEvents(path).map((e) => e.event_type)).toEqual([
      "tool_call_forwarded",
      "checkpoint",
      "tool_call_forwarded",
      "tool_call_forwarded",
      "tool_call_forwarded",
      "checkpoint",
    ]);
  });

  it(`commits without waiting once ${COMMIT_AT_EVENTS} events are queued`, async () => {
    const { log, path } = await open();
    const few = log.appendMany(Array.from({ length: COMMIT_AT_EVENTS - 1 }, (_, i) => event(i)));
    expect(await settledSoon(few)).toBe(false);
    const last = log.append(event(COMMIT_AT_EVENTS - 1));
    await Promise.all([few, last]);
    expect(readLines(path)).toHaveLength(COMMIT_AT_EVENTS);
    await log.close();
  });

  it("flush waits for what is queued and does not leave the next appends in a hurry", async () => {
    const { log, path } = await open();
    const a = log.append(event(1));
    await Promise.all([log.flush(), log.flush()]);
    await a;
    const b = log.append(event(2));
    expect(await settledSoon(b)).toBe(false);
    expect(written(path)).toEqual([1]);
    await log.close();
    expect(written(path)).toEqual([1, 2]);
  });
});
