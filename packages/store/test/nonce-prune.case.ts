import { describe, expect, it } from "vitest";
import {
  createConsentRequest,
  ed25519KeyPairFromSeed,
  signConsentResponse,
  verifyConsentProof,
  type NonceStore,
} from "@acp/core";
import { SPENT_NONCE_KEEP_MS } from "../src/nonce/index.js";

/** A durable nonce store with the prune, on a clock the test moves. */
export interface PruningNonceStore extends NonceStore {
  isSpent(nonce: string): boolean | Promise<boolean>;
  prune(nowMs: number, limit?: number): number | Promise<number>;
  forgottenThrough(): number | undefined | Promise<number | undefined>;
}

/** What the suite runs against: the store, and the consent rows that can hold its nonces. */
export interface NoncePruneFixture {
  /** Spends stamped with `clock()`. */
  readonly nonces: PruningNonceStore;
  /** Writes a settled consent row `id` carrying `nonce`. */
  readonly holdRow: (id: string, nonce: string) => Promise<void>;
  /** Deletes consent row `id` (as the retention does a day after its request ended). */
  readonly dropRow: (id: string) => Promise<void>;
}

const T0 = Date.parse("2026-04-01T12:00:00Z");
const MINUTE = 60_000;
/** The first moment a nonce spent at T0 whose approval ended at T0 + 1 min may go. */
const PRUNABLE = T0 + MINUTE + SPENT_NONCE_KEEP_MS + 1;

function signedApproval(seed: number) {
  const key = ed25519KeyPairFromSeed(new Uint8Array(32).fill(seed));
  const request = createConsentRequest(
    {
      agent: { id: "a", name: "a", command: "a" },
      action: {
        tool: "send_email",
        server: "mail",
        category: "communication",
        risk_level: "high",
        parameters: { to: "b" },
        description: "d",
      },
      policy: { rule_id: "r", rule_name: "r", required_level: "high" },
      timeoutSeconds: 300,
    },
    { now: () => new Date(T0), randomUUID: () => `00000000-0000-4000-8000-${String(seed).padStart(12, "0")}` },
  );
  const response = signConsentResponse(
    { request, decision: "approved", approver: { id: "alice", channel: "terminal" }, validForSeconds: 60 },
    key,
    { now: () => new Date(T0) },
  );
  return { key, request, response };
}

/**
 * The shared suite of the spent-nonce prune (SQLite and PostgreSQL): a nonce goes once nothing could use it
 * again — a day after its approval ended and after its spend, and once no consent row carries it.
 */
export function describeNoncePrune(name: string, create: (clock: () => number) => Promise<NoncePruneFixture>): void {
  describe(`spent-nonce prune: ${name}`, () => {
    it("forgets a nonce a day after its approval ended, and keeps a fresher one", async () => {
      const { nonces } = await create(() => T0);
      expect(await nonces.spend("n_old", "cr_old", T0 + MINUTE)).toBe(true);
      expect(await nonces.spend("n_new", "cr_new", T0 + 2 * MINUTE)).toBe(true);
      expect(await nonces.prune(PRUNABLE - 1)).toBe(0); // exactly at the bound: still kept
      expect(await nonces.prune(PRUNABLE)).toBe(1);
      expect(await nonces.isSpent("n_old")).toBe(false);
      expect(await nonces.isSpent("n_new")).toBe(true);
    });

    it("keeps a nonce a day after its spend, whatever expiry it was spent with", async () => {
      const { nonces } = await create(() => T0);
      expect(await nonces.spend("n_late", "cr_late", T0 - 30 * SPENT_NONCE_KEEP_MS)).toBe(true);
      expect(await nonces.prune(T0 + SPENT_NONCE_KEEP_MS)).toBe(0);
      expect(await nonces.spend("n_late", "cr_late", T0 - 30 * SPENT_NONCE_KEEP_MS)).toBe(false);
      expect(await nonces.prune(T0 + SPENT_NONCE_KEEP_MS + 1)).toBe(1);
    });

    it("keeps a nonce while a consent row carries it, and forgets it once the row is gone", async () => {
      const { nonces, holdRow, dropRow } = await create(() => T0);
      await holdRow("cr_held", "n_held");
      expect(await nonces.spend("n_held", "cr_held", T0 + MINUTE)).toBe(true);
      expect(await nonces.prune(PRUNABLE + 30 * SPENT_NONCE_KEEP_MS)).toBe(0);
      expect(await nonces.isSpent("n_held")).toBe(true);
      await dropRow("cr_held");
      expect(await nonces.prune(PRUNABLE)).toBe(1);
    });

    it("is idempotent and deletes at most the batch it is given, oldest first", async () => {
      const { nonces } = await create(() => T0);
      for (const i of [3, 1, 2]) expect(await nonces.spend(`n_${i}`, `cr_${i}`, T0 + i)).toBe(true);
      expect(await nonces.prune(PRUNABLE + 10, 2)).toBe(2);
      expect(await nonces.isSpent("n_3")).toBe(true);
      expect(await nonces.prune(PRUNABLE + 10)).toBe(1);
      expect(await nonces.prune(PRUNABLE + 10)).toBe(0);
    });

    it("prunes a few old nonces on each spend", async () => {
      let now = T0;
      const { nonces } = await create(() => now);
      expect(await nonces.spend("n_a", "cr_a", T0 + MINUTE)).toBe(true);
      expect(await nonces.spend("n_b", "cr_b", T0 + MINUTE)).toBe(true);
      now = PRUNABLE;
      expect(await nonces.spend("n_c", "cr_c", now + MINUTE)).toBe(true);
      expect([await nonces.isSpent("n_a"), await nonces.isSpent("n_b"), await nonces.isSpent("n_c")]).toEqual([
        false,
        false,
        true,
      ]);
    });

    it("refuses a replayed approval whose nonce was pruned: it is too old", async () => {
      const { key, request, response } = signedApproval(7);
      const { nonces } = await create(() => T0);
      const options = { request, trustedPublicKey: key.publicKeyHex, nonceStore: nonces };
      expect((await verifyConsentProof(response, { ...options, now: T0 + 1000 })).ok).toBe(true);
      const late = Date.parse(response.conditions.valid_until) + SPENT_NONCE_KEEP_MS + 1;
      expect(await nonces.prune(late)).toBe(1);
      expect(await nonces.isSpent(response.nonce)).toBe(false);
      const replay = await verifyConsentProof(response, { ...options, now: late });
      expect(replay.ok ? "accepted" : replay.reason).toBe("expired");
      expect(await nonces.isSpent(response.nonce)).toBe(false); // refused before anything was spent
    });

    it("refuses, once the clock is set right, an approval whose nonce a clock days ahead pruned", async () => {
      const { key, request, response } = signedApproval(8);
      let now = T0;
      const { nonces } = await create(() => now);
      const options = { request, trustedPublicKey: key.publicKeyHex, nonceStore: nonces };
      expect((await verifyConsentProof(response, { ...options, now: T0 + 1000 })).ok).toBe(true);
      now = T0 + 3 * SPENT_NONCE_KEEP_MS; // the clock jumps ahead: the nonce looks long dead
      expect(await nonces.prune(now)).toBe(1);
      expect(await nonces.isSpent(response.nonce)).toBe(false);
      now = T0 + 2000; // and is set right: the approval is within its minute again
      const replay = await verifyConsentProof(response, { ...options, now: T0 + 2000 });
      expect(replay.ok ? "accepted" : replay.reason).toBe("expired");
      expect(replay.ok ? "" : replay.issues[0]?.message).toContain("was the clock set back?");
      expect(await nonces.forgottenThrough()).toBe(Date.parse(response.conditions.valid_until));
      // a spend by the prune of a spend (no verifier) is refused too, and an approval ending later is taken
      expect(await nonces.spend(response.nonce, request.id, Date.parse(response.conditions.valid_until))).toBe(false);
      expect(await nonces.spend("n_later", "cr_later", Date.parse(response.conditions.valid_until) + 1)).toBe(true);
    });
  });
}
