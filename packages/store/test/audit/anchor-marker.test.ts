import { existsSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchoredMarkerPathOf, anchorPathOf, hasAnchoredMarker, openAuditLog } from "../../src/audit/index.js";
import { keyPair, readLines, steppingClock, tempHomes } from "./audit-fixture.js";

// A log that has had an anchor is marked (`<log>.anchored`): its anchor deleted later (to hide a cut of the
// log) is refused by the writer, which used to verify what was left and anchor it again (laundering the cut).

const homes = tempHomes();
afterAll(homes.cleanup);

const event = { event_type: "policy_evaluated", tool: "t", decision: "accept" } as const;

/** A log of 5 events with checkpoints at lines 4 and 7, its anchor and marker written by the writer. */
async function anchoredLog(keys = keyPair()): Promise<{ path: string; keys: ReturnType<typeof keyPair> }> {
  const path = join(homes.make(), "audit.jsonl");
  const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey, checkpointEvery: 3 });
  for (let i = 0; i < 5; i++) await log.append(event);
  await log.close();
  return { path, keys };
}

describe("the marker that a log has had an anchor", () => {
  it("is written with the first anchor, and not before: a log with no checkpoint yet has neither", async () => {
    const keys = keyPair();
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey, checkpointEvery: 3 });
    await log.append(event);
    expect(existsSync(anchorPathOf(path))).toBe(false);
    expect(hasAnchoredMarker(path)).toBe(false);
    await log.append(event);
    await log.append(event); // the checkpoint after 3 events, and its anchor
    expect(existsSync(anchorPathOf(path))).toBe(true);
    expect(hasAnchoredMarker(path)).toBe(true);
    expect(readFileSync(anchoredMarkerPathOf(path), "utf8")).toContain("acp audit verify fails it (anchor_missing)");
    await log.close();
  });

  it("makes a writer refuse a log whose anchor was deleted and the log cut back, writing nothing", async () => {
    const { path, keys } = await anchoredLog();
    const lines = readLines(path);
    // cut back to the first checkpoint (line 4, a genuine signed line) and the anchor removed
    writeFileSync(path, `${lines.slice(0, 4).join("\n")}\n`);
    unlinkSync(anchorPathOf(path));
    const before = readFileSync(path);
    const opening = openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey, checkpointEvery: 3 });
    // before 28 Nov 2026: verified what was left, anchored it at line 4 and went on (the cut vouched for)
    await expect(opening).rejects.toMatchObject({ code: "audit_anchor_missing" });
    await expect(opening).rejects.toThrow(`records that it had one: the anchor was deleted`);
    expect(readFileSync(path)).toEqual(before);
    expect(existsSync(anchorPathOf(path))).toBe(false);
  });

  it("makes a writer without a signer refuse it too, and a log emptied with it", async () => {
    const { path } = await anchoredLog();
    writeFileSync(path, "");
    unlinkSync(anchorPathOf(path));
    await expect(openAuditLog(path, { clock: steppingClock() })).rejects.toMatchObject({
      code: "audit_anchor_missing",
    });
    unlinkSync(path); // the log deleted too: the marker still tells
    await expect(openAuditLog(path, { clock: steppingClock(), signer: keyPair().privateKey })).rejects.toMatchObject({
      code: "audit_anchor_missing",
    });
  });

  it("once removed by the person, lets the writer verify the log in full and anchor it again", async () => {
    const { path, keys } = await anchoredLog();
    unlinkSync(anchorPathOf(path));
    unlinkSync(anchoredMarkerPathOf(path));
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
    expect(log.reanchored).toEqual({ line: 7, linesAfter: 0 });
    await log.close();
    expect(hasAnchoredMarker(path)).toBe(true);
  });

  it("is written at the next open of a log anchored before markers", async () => {
    const { path, keys } = await anchoredLog();
    unlinkSync(anchoredMarkerPathOf(path));
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
    expect(log.reanchored).toBeNull();
    expect(hasAnchoredMarker(path)).toBe(true);
    await log.close();
  });
});
