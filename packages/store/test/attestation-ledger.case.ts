import { describe, expect, it } from "vitest";
import { attestationKey, createTrustedChannelAttestation, type AttestationLedger } from "@acp/core";
import { SPENT_NONCE_KEEP_MS, attestationNonce } from "../src/nonce/index.js";

/** What the shared attestation-ledger suite runs against: two connections to one state, on a clock it moves. */
export interface AttestationLedgerFixture {
  /** The ledger on the first connection, its spends stamped with `clock()`. */
  readonly ledger: AttestationLedger;
  /** The same state through another connection (another process, another node). */
  readonly other: AttestationLedger;
  /** Whether an attestation key's nonce is in the table now. */
  readonly isSpent: (nonce: string) => boolean | Promise<boolean>;
  /** The nonce store's sweep (`acp serve` runs it every minute). */
  readonly prune: (nowMs: number) => number | Promise<number>;
  /** A ledger whose connection is closed: it cannot answer. */
  readonly broken: () => Promise<AttestationLedger>;
}

const T0 = new Date("2026-04-01T12:00:00Z");
const SKEW_MS = 300_000;

function keyAt(timestamp: Date, keyId = "channel"): string {
  const attestation = createTrustedChannelAttestation({
    domain: "self_modification",
    action: "prune_stale_memory",
    keyId,
    secret: "trusted-channel-secret",
    timestamp,
  });
  return attestationKey(attestation);
}

const until = (timestamp: Date): Date => new Date(timestamp.getTime() + SKEW_MS);

/**
 * The suite every durable attestation ledger passes (SQLite `state.db`, PostgreSQL): an attestation is taken
 * once by every connection together, exactly one of racing uses wins, it is forgotten only after its expiry,
 * and a ledger that cannot answer fails (the graph then refuses).
 */
export function describeAttestationLedger(
  name: string,
  create: (clock: () => number) => Promise<AttestationLedgerFixture>,
): void {
  describe(`attestation ledger: ${name}`, () => {
    it("takes an attestation once and refuses the replay, also through another connection", async () => {
      const { ledger, other } = await create(() => T0.getTime());
      const key = keyAt(T0);
      expect(await ledger.use(key, until(T0), T0)).toBe(true);
      expect(await ledger.use(key, until(T0), T0)).toBe(false);
      expect(await other.use(key, until(T0), new Date(T0.getTime() + 1_000))).toBe(false);
      // a fresh attestation of the same call (another timestamp, so another HMAC) is taken
      const fresh = keyAt(new Date(T0.getTime() + 1_000));
      expect(await other.use(fresh, until(T0), T0)).toBe(true);
    });

    it("keeps attestations of different keys apart, whatever bytes the key id holds", async () => {
      const { ledger, isSpent } = await create(() => T0.getTime());
      const keys = [keyAt(T0, "a"), keyAt(T0, "b"), keyAt(T0, "nul\u0000id"), keyAt(T0, "x".repeat(5000))];
      const first = await Promise.all(keys.map((k) => Promise.resolve(ledger.use(k, until(T0), T0))));
      expect(first).toEqual([true, true, true, true]);
      for (const k of keys) expect(await isSpent(attestationNonce(k))).toBe(true);
    });

    it("lets exactly one of two connections racing for one attestation through", async () => {
      const { ledger, other } = await create(() => T0.getTime());
      const key = keyAt(T0);
      const uses = Array.from({ length: 10 }, (_, i) =>
        Promise.resolve().then(() => (i % 2 === 0 ? ledger : other).use(key, until(T0), T0)),
      );
      const results = await Promise.all(uses);
      expect(results.filter((r) => r)).toHaveLength(1);
    });

    it("keeps an attestation until after its expiry, and the sweep then forgets it", async () => {
      let now = T0.getTime();
      const { ledger, isSpent, prune } = await create(() => now);
      const key = keyAt(T0);
      expect(await ledger.use(key, until(T0), T0)).toBe(true);
      expect(await prune(until(T0).getTime() + 1)).toBe(0); // expired, but kept for the clocks' margin
      expect(await isSpent(attestationNonce(key))).toBe(true);
      now = until(T0).getTime() + SPENT_NONCE_KEEP_MS + 1;
      expect(await prune(now)).toBe(1);
      expect(await isSpent(attestationNonce(key))).toBe(false);
    });

    it("fails when it cannot answer, and refuses an invalid expiry", async () => {
      const { ledger } = await create(() => T0.getTime());
      await expect(Promise.resolve().then(() => ledger.use(keyAt(T0), new Date(Number.NaN), T0))).rejects.toThrow(
        /invalid expiry/,
      );
      const broken = await create(() => T0.getTime()).then((f) => f.broken());
      await expect(Promise.resolve().then(() => broken.use(keyAt(T0), until(T0), T0))).rejects.toThrow();
    });
  });
}
