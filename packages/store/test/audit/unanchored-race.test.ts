import { unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { anchoredMarkerPathOf, anchorPathOf, openAuditLog, readAnchor, writeAnchor } from "../../src/audit/index.js";
import type * as UnanchoredLog from "../../src/audit/unanchored-log.js";
import { keyPair, readLines, steppingClock, tempHomes, verifyFile } from "./audit-fixture.js";

// A writer that finds signed checkpoints and no anchor verifies the log without the lock (it may take
// longer than the stale-lock time). Another writer may write its anchor in between: it wrote a checkpoint
// and renames the anchor into place a moment later, still under the lock. Once the first writer has the
// lock it must take the anchored path (the log must hold that anchor's checkpoint) and must not say it
// anchored the log again (acp proxy and acp run would print a false alarm). The moment in between is made
// deterministic: the test runs `between` right after the unlocked verification returned.

let between: (() => Promise<void>) | null = null;

vi.mock("../../src/audit/unanchored-log.js", async (importOriginal) => {
  const real = await importOriginal<typeof UnanchoredLog>();
  return {
    ...real,
    verifyUnanchoredLog: async (...args: Parameters<typeof real.verifyUnanchoredLog>) => {
      const adopted = await real.verifyUnanchoredLog(...args);
      const run = between;
      between = null;
      if (run !== null) await run();
      return adopted;
    },
  };
});

const homes = tempHomes();
afterAll(homes.cleanup);
afterEach(() => {
  between = null;
});

const event = { event_type: "policy_evaluated", tool: "t", decision: "accept" } as const;

/** A log of 5 events with checkpoints at lines 4 and 7, its anchor (returned) removed. */
async function unanchoredLog(keys: ReturnType<typeof keyPair>): Promise<{ path: string; anchor: string }> {
  const path = join(homes.make(), "audit.jsonl");
  const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey, checkpointEvery: 3 });
  for (let i = 0; i < 5; i++) await log.append(event);
  await log.close();
  const anchor = readAnchor(path) as string;
  expect(anchor).toBe(readLines(path)[6]);
  // moved without its anchor (and the marker that it had one)
  unlinkSync(anchorPathOf(path));
  unlinkSync(anchoredMarkerPathOf(path));
  return { path, anchor };
}

describe("a log whose anchor another writer writes while this one verifies it without the lock", () => {
  it("is opened on the anchored path and not reported as anchored again", async () => {
    const keys = keyPair();
    const { path, anchor } = await unanchoredLog(keys);
    let ran = false;
    between = () => {
      writeAnchor(path, anchor); // the other writer's rename, after its checkpoint line was written
      ran = true;
      return Promise.resolve();
    };
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
    expect(ran).toBe(true);
    expect(log.reanchored).toBeNull();
    await log.append(event);
    await log.close();
    expect(verifyFile(path, keys.publicKey).ok).toBe(true);
    expect(readAnchor(path)).toBe(readLines(path).at(-1));
  });

  it("holds the other writer's later checkpoint, not the one it verified", async () => {
    const keys = keyPair();
    const { path, anchor } = await unanchoredLog(keys);
    between = async () => {
      // the other writer had the log open with its anchor, and goes on: more lines, a closing checkpoint
      writeAnchor(path, anchor);
      const other = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
      expect(other.reanchored).toBeNull();
      await other.append(event);
      await other.close();
    };
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
    expect(log.reanchored).toBeNull();
    expect(readLines(path)).toHaveLength(9);
    expect(readAnchor(path)).toBe(readLines(path)[8]);
    await log.append(event);
    await log.close();
    expect(verifyFile(path, keys.publicKey).ok).toBe(true);
  });

  it("is refused when the anchor that appeared is not a checkpoint the log holds", async () => {
    const keys = keyPair();
    const { path } = await unanchoredLog(keys);
    const elsewhere = await unanchoredLog(keys);
    between = () => {
      writeAnchor(path, elsewhere.anchor);
      return Promise.resolve();
    };
    await expect(openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey })).rejects.toMatchObject({
      code: "audit_anchor_mismatch",
    });
    expect(readAnchor(path)).toBe(elsewhere.anchor);
  });
});
