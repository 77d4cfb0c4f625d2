import { sign } from "node:crypto";
import { appendFileSync, existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sealAuditEvent, serializeAuditEvent, type AuditEventV02 } from "@acp/core";
import { anchoredMarkerPathOf, anchorPathOf, openAuditLog, readAnchor } from "../../src/audit/index.js";
import { keyPair, readEvents, readLines, steppingClock, tempHomes, verifyFile } from "./audit-fixture.js";

// A log that holds signed checkpoints but no anchor beside it (moved or copied without it, or the anchor
// deleted): a writer with a signer verifies it in full with the key before it extends and signs it.

const homes = tempHomes();
afterAll(homes.cleanup);

/** A log of 7 events with checkpoints at lines 4 and 8 (after 3 and at close) and its anchor removed. */
async function unanchoredLog(keys = keyPair()): Promise<{ path: string; keys: ReturnType<typeof keyPair> }> {
  const path = join(homes.make(), "audit.jsonl");
  const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey, checkpointEvery: 3 });
  for (let i = 0; i < 5; i++)
    await log.append({ event_type: "policy_evaluated", tool: "t", decision: i === 1 ? "refuse" : "accept" });
  await log.close();
  expect(readEvents(path).map((e) => e.event_type)).toEqual([
    "policy_evaluated",
    "policy_evaluated",
    "policy_evaluated",
    "checkpoint",
    "policy_evaluated",
    "policy_evaluated",
    "checkpoint",
  ]);
  // moved or copied without its anchor, or written before anchors: no marker that it had one either
  unlinkSync(anchorPathOf(path));
  unlinkSync(anchoredMarkerPathOf(path));
  return { path, keys };
}

/** The events' fields but their own hash. */
function withoutHash(e: AuditEventV02): Omit<AuditEventV02, "event_hash"> {
  const body: Record<string, unknown> = { ...e };
  delete body["event_hash"];
  return body as Omit<AuditEventV02, "event_hash">;
}

/** The refused call made accepted and every line hashed and linked again, checkpoints kept as they were. */
function rewriteKeepingCheckpoints(path: string): void {
  let head: string | null = null;
  let out = "";
  for (const e of readEvents(path)) {
    const edited = e.decision === "refuse" ? { ...e, decision: "accept" as const } : e;
    const sealed = sealAuditEvent({ ...withoutHash(edited), previous_event_hash: head });
    head = sealed.event_hash;
    out += `${serializeAuditEvent(sealed)}\n`;
  }
  writeFileSync(path, out);
}

const event = { event_type: "policy_evaluated", tool: "t", decision: "accept" } as const;

describe("a log with signed checkpoints and no anchor", () => {
  it("is verified with the key and anchored at its last checkpoint before it is extended", async () => {
    const { path, keys } = await unanchoredLog();
    const lastCheckpoint = readLines(path).at(-1);
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey, checkpointEvery: 3 });
    // anchored at open, before anything is appended
    expect(readAnchor(path)).toBe(lastCheckpoint);
    expect(log.reanchored).toEqual({ line: 7, linesAfter: 0 });
    await log.append(event);
    await log.close();
    expect(verifyFile(path, keys.publicKey).ok).toBe(true);
    expect(readAnchor(path)).toBe(readLines(path).at(-1));
  });

  it("says how many lines after its last checkpoint were found unsigned", async () => {
    const { path, keys } = await unanchoredLog();
    const previous = (readEvents(path).at(-1) as AuditEventV02).event_hash;
    const after = sealAuditEvent({
      ...withoutHash(readEvents(path)[0] as AuditEventV02),
      previous_event_hash: previous,
    });
    appendFileSync(path, `${serializeAuditEvent(after)}\n`);
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
    expect(log.reanchored).toEqual({ line: 7, linesAfter: 1 });
    expect(readAnchor(path)).toBe(readLines(path)[6]);
    await log.close();
  });

  it("is refused when a line a checkpoint covers was rewritten (the writer would have signed over it)", async () => {
    const { path, keys } = await unanchoredLog();
    rewriteKeepingCheckpoints(path);
    const forged = readFileSync(path, "utf8");
    const open = openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
    await expect(open).rejects.toMatchObject({ code: "audit_anchor_missing" });
    await expect(open).rejects.toThrow(/line 4: checkpoint_mismatch.*acp audit verify/);
    // nothing written, no anchor made up for it, no lock left behind
    expect(readFileSync(path, "utf8")).toBe(forged);
    expect(existsSync(anchorPathOf(path))).toBe(false);
    expect(readdirSync(join(path, "..")).sort()).toEqual(["audit.jsonl"]);
  });

  it("is refused when its checkpoints are signed with another key (a log copied into another home)", async () => {
    const { path } = await unanchoredLog();
    const other = keyPair();
    await expect(openAuditLog(path, { clock: steppingClock(), signer: other.privateKey })).rejects.toMatchObject({
      code: "audit_anchor_missing",
    });
  });

  it("is refused by a writer signing with a function and no public key to verify with; taken with one", async () => {
    const { path, keys } = await unanchoredLog();
    const signer = (message: Uint8Array): Uint8Array => sign(null, message, keys.privateKey);
    await expect(openAuditLog(path, { clock: steppingClock(), signer })).rejects.toThrow(/no public key/);
    const log = await openAuditLog(path, { clock: steppingClock(), signer, publicKey: keys.publicHex });
    expect(log.reanchored?.line).toBe(7);
    await log.close();
  });

  it("with a torn last line: the line is left out of the verification and moved aside as at any open", async () => {
    const { path, keys } = await unanchoredLog();
    appendFileSync(path, '{"event_type":"checkpoint","torn');
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
    expect(log.reanchored?.line).toBe(7);
    expect(log.recovered).not.toBeNull();
    await log.close();
    expect(verifyFile(path, keys.publicKey).ok).toBe(true);
  });

  it("is opened as before by a writer without a signer (it signs nothing over it): no anchor is made", async () => {
    const { path } = await unanchoredLog();
    rewriteKeepingCheckpoints(path);
    const log = await openAuditLog(path, { clock: steppingClock() });
    expect(log.reanchored).toBeNull();
    await log.close();
    expect(existsSync(anchorPathOf(path))).toBe(false);
  });
});

describe("a log without any checkpoint and no anchor", () => {
  it("is extended as before: nothing signed to verify, the first checkpoint becomes the anchor", async () => {
    const keys = keyPair();
    const path = join(homes.make(), "audit.jsonl");
    const unsigned = await openAuditLog(path, { clock: steppingClock() });
    await unsigned.append(event);
    await unsigned.close();
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
    expect(log.reanchored).toBeNull();
    expect(existsSync(anchorPathOf(path))).toBe(false);
    await log.close();
    expect(readAnchor(path)).toBe(readLines(path).at(-1));
    expect(verifyFile(path, keys.publicKey).ok).toBe(true);
  });
});
