import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchorPathOf, openAuditLog, readAnchor } from "../../src/audit/index.js";
import { keyPair, readLines, steppingClock, tempHomes, verifyFile } from "./audit-fixture.js";

const homes = tempHomes();
afterAll(homes.cleanup);

/** A log of three events and its anchor, both signed (a checkpoint at close) with `key`. */
async function logSignedBy(key: ReturnType<typeof keyPair>["privateKey"]): Promise<string> {
  const path = join(homes.make(), "audit.jsonl");
  const log = await openAuditLog(path, { clock: steppingClock(), signer: key });
  for (const id of ["cr_1", "cr_2", "cr_3"]) await log.append({ event_type: "policy_evaluated", request_id: id });
  await log.close();
  expect(readAnchor(path)).toBe(readLines(path).at(-1));
  return path;
}

describe("the writer checks the anchor's signature at open", () => {
  it("refuses a log whose anchor another key signed, and writes nothing to it", async () => {
    const foreign = keyPair();
    const home = keyPair();
    const path = await logSignedBy(foreign.privateKey);
    const before = readFileSync(path);
    const anchorBefore = readAnchor(path);
    const opening = openAuditLog(path, { clock: steppingClock(), signer: home.privateKey });
    await expect(opening).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
    await expect(opening).rejects.toThrow(/not signed by this home's key/);
    await expect(opening).rejects.toThrow(/move `.*audit\.jsonl` and `.*audit\.jsonl\.checkpoint` aside together/);
    await expect(opening).rejects.toThrow(/restore the home's keys/);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readAnchor(path)).toBe(anchorBefore);
    // the log still verifies with the key that signed it
    expect(verifyFile(path, foreign.publicKey).ok).toBe(true);
  });

  it("checks with the given public key over the signer's (a signer function with the home's key)", async () => {
    const own = keyPair();
    const other = keyPair();
    const path = await logSignedBy(own.privateKey);
    const sign = (message: Uint8Array): Uint8Array => {
      void message;
      throw new Error("not reached");
    };
    await expect(
      openAuditLog(path, { clock: steppingClock(), signer: sign, publicKey: other.publicKey }),
    ).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
  });

  it("extends a log whose anchor its own key signed, which then verifies with that key", async () => {
    const own = keyPair();
    const path = await logSignedBy(own.privateKey);
    const log = await openAuditLog(path, { clock: steppingClock(Date.UTC(2026, 0, 16)), signer: own.privateKey });
    await log.append({ event_type: "policy_evaluated", request_id: "cr_4" });
    await log.close();
    expect(readLines(path)).toHaveLength(6);
    expect(verifyFile(path, own.publicKey).ok).toBe(true);
  });

  it("with a key of this process only, checks the anchor's place but not its signature (as before)", async () => {
    const earlier = keyPair();
    const path = await logSignedBy(earlier.privateKey);
    const now = keyPair();
    const log = await openAuditLog(path, { clock: steppingClock(), signer: now.privateKey, ephemeralSigner: true });
    await log.append({ event_type: "policy_evaluated", request_id: "cr_4" });
    await log.close();
    expect(readLines(path)).toHaveLength(6);
    expect(verifyFile(path).ok).toBe(true);
  });

  it("without a signer, checks only the anchor's place (nothing it writes is signed)", async () => {
    const path = await logSignedBy(keyPair().privateKey);
    const log = await openAuditLog(path, { clock: steppingClock() });
    await log.append({ event_type: "policy_evaluated", request_id: "cr_4" });
    await log.close();
    expect(readLines(path)).toHaveLength(5);
    expect(existsSync(anchorPathOf(path))).toBe(true);
  });
});
