import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sealAuditEvent, serializeAuditEvent, type AuditEventV02 } from "@acp/core";
import { anchorPathOf, openAuditLog, type AuditLog } from "../../src/audit/index.js";
import { keyPair, readEvents, readLines, steppingClock, tempHomes, verifyFile } from "./audit-fixture.js";

const homes = tempHomes();
afterAll(homes.cleanup);

/** The event's fields but its own hash. */
function withoutHash(e: AuditEventV02): Omit<AuditEventV02, "event_hash"> {
  const body: Record<string, unknown> = { ...e };
  delete body["event_hash"];
  return body as Omit<AuditEventV02, "event_hash">;
}

/** The events hashed again and linked one to the next: what anyone can do without the key. */
function rechain(events: readonly AuditEventV02[]): string {
  let head: string | null = null;
  let out = "";
  for (const e of events) {
    const sealed = sealAuditEvent({ ...withoutHash(e), previous_event_hash: head });
    head = sealed.event_hash;
    out += `${serializeAuditEvent(sealed)}\n`;
  }
  return out;
}

/** The refused call made accepted, and the signed checkpoints the edit broke dropped: the history rewritten. */
function forge(path: string): void {
  const events = readEvents(path).filter((e) => e.event_type !== "checkpoint");
  writeFileSync(path, rechain(events.map((e) => ({ ...e, decision: "accept" }))));
}

async function signedLog(): Promise<{ path: string; open: () => Promise<AuditLog>; keys: ReturnType<typeof keyPair> }> {
  const keys = keyPair();
  const path = join(homes.make(), "audit.jsonl");
  const clock = steppingClock();
  const open = (): Promise<AuditLog> => openAuditLog(path, { clock, signer: keys.privateKey, checkpointEvery: 3 });
  const log = await open();
  for (let i = 0; i < 5; i++)
    await log.append({ event_type: "policy_evaluated", tool: "t", decision: i === 1 ? "refuse" : "accept" });
  await log.close();
  expect(verifyFile(path, keys.publicKey).ok).toBe(true);
  return { path, open, keys };
}

describe("the writer never signs a history the anchor does not vouch for", () => {
  it("refuses to open a log rewritten without the key (the next checkpoint would have signed it)", async () => {
    const { path, open, keys } = await signedLog();
    const anchor = readFileSync(anchorPathOf(path), "utf8");
    forge(path);
    const forged = readFileSync(path, "utf8");
    expect(verifyFile(path, keys.publicKey).problem?.code).toBe("truncated_after_checkpoint");
    await expect(open()).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
    // nothing written, the anchor that tells of the rewrite kept: verify still fails
    expect(readFileSync(path, "utf8")).toBe(forged);
    expect(readFileSync(anchorPathOf(path), "utf8")).toBe(anchor);
    expect(verifyFile(path, keys.publicKey).ok).toBe(false);
  });

  it("refuses a log whose anchor line was replaced by another that hashes to itself", async () => {
    const { path, open } = await signedLog();
    const lines = readLines(path);
    const anchor = readFileSync(anchorPathOf(path), "utf8").trim();
    expect(lines.at(-1)).toBe(anchor);
    const body = withoutHash(JSON.parse(anchor) as AuditEventV02);
    const signature = body.metadata["signature"] as string;
    const metadata = { ...body.metadata, signature: (signature[0] === "0" ? "1" : "0") + signature.slice(1) };
    lines[lines.length - 1] = serializeAuditEvent(sealAuditEvent({ ...body, metadata }));
    writeFileSync(path, lines.map((l) => `${l}\n`).join(""));
    await expect(open()).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
  });

  it("refuses a log cut before its anchor's checkpoint, and one deleted with the anchor left", async () => {
    const { path, open } = await signedLog();
    writeFileSync(
      path,
      readLines(path)
        .slice(0, 2)
        .map((l) => `${l}\n`)
        .join(""),
    );
    await expect(open()).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
    unlinkSync(path);
    await expect(open()).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
  });

  it("refuses an anchor that is not a checkpoint line", async () => {
    const { path, open } = await signedLog();
    writeFileSync(anchorPathOf(path), `${readLines(path)[0]}\n`);
    await expect(open()).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
  });

  it("stops when history is rewritten while it is open, before signing it", async () => {
    const { path, open, keys } = await signedLog();
    const log = await open();
    await log.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
    await log.checkpoint();
    forge(path);
    await expect(log.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" })).rejects.toMatchObject({
      code: "audit_anchor_mismatch",
    });
    await log.close().catch(() => undefined);
    expect(verifyFile(path, keys.publicKey).ok).toBe(false);
  });

  it("holds each checkpoint it writes: a rewrite after the anchor it opened with, over its own checkpoint, stops it", async () => {
    const { path, open, keys } = await signedLog();
    const log = await open();
    const opened = readLines(path).length;
    await log.append({ event_type: "policy_evaluated", tool: "t", decision: "refuse" });
    await log.checkpoint();
    // the lines up to the anchor the writer opened with stay; the refusal after it becomes an acceptance
    const events = readEvents(path);
    expect(events.slice(opened).map((e) => e.event_type)).toEqual(["policy_evaluated", "checkpoint"]);
    const refused = withoutHash({ ...(events[opened] as AuditEventV02), decision: "accept" });
    const edited = sealAuditEvent({ ...refused, previous_event_hash: events[opened - 1]?.event_hash ?? null });
    const kept = readLines(path).slice(0, opened);
    writeFileSync(path, [...kept, serializeAuditEvent(edited)].map((l) => `${l}\n`).join(""));
    await expect(log.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" })).rejects.toMatchObject({
      code: "audit_anchor_mismatch",
    });
    await log.close().catch(() => undefined);
    expect(verifyFile(path, keys.publicKey).ok).toBe(false);
  });

  it("opens and extends an intact log as before, and a log without anchor", async () => {
    const { path, open, keys } = await signedLog();
    const log = await open();
    for (let i = 0; i < 7; i++) await log.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
    await log.close();
    expect(verifyFile(path, keys.publicKey).ok).toBe(true);
    const again = await open();
    await again.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
    await again.close();
    expect(verifyFile(path, keys.publicKey)).toMatchObject({ ok: true, eventsAfterLastCheckpoint: 0 });
    const bare = join(homes.make(), "audit.jsonl");
    const plain = await openAuditLog(bare, { clock: steppingClock() });
    await plain.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
    await plain.close();
    await (await openAuditLog(bare, { clock: steppingClock() })).close();
  });
});
