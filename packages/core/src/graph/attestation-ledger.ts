/**
 * Trusted-channel attestations are single-use: the ledger remembers each one that verified until it goes
 * stale (its timestamp plus the clock skew, past which the window refuses it anyway), and a second request
 * carrying the same attestation — the same statement, key and timestamp, so the same HMAC — is refused
 * (`attestation_replayed`). No I/O: the clock is the caller's; a ledger shared across processes (a database)
 * is the caller's to inject. A one-off check spends in `checkConsentGraph` (`GraphContext.attestations`); the
 * pipeline's graph source spends once the graph's verdict is final ({@link spendVerifiedAttestation}), so
 * judging one request more than once (an asynchronous ledger's second pass) spends it once. A ledger in a
 * store (`@acp/store`, shared by every node) may answer asynchronously: the pipeline's graph source waits for
 * it; a one-off `checkConsentGraph`, which cannot wait, refuses.
 */
import type { SourceVerdict } from "../pipeline/types.js";
import type { ActionRequest, TrustedChannelAttestation } from "../request/index.js";
import type { GraphReason } from "./types.js";

/** Where attestations already used are kept. */
export interface AttestationLedger {
  /**
   * Records attestation `key` as used until `expiresAt`; false when it already is (a replay). A ledger must
   * not forget a key before its `expiresAt`: one that can keep no more refuses (returns false), never forgets.
   * Of two concurrent uses of one key, exactly one is true. A store answers asynchronously.
   */
  use(key: string, expiresAt: Date, now: Date): boolean | Promise<boolean>;
}

/** The memory ledger answers synchronously. */
export interface MemoryAttestationLedger extends AttestationLedger {
  use(key: string, expiresAt: Date, now: Date): boolean;
}

/**
 * The key an attestation is remembered by: its key id and HMAC, which covers the statement and the timestamp,
 * so two attestations of the same call made at different times are two keys.
 */
export function attestationKey(attestation: TrustedChannelAttestation): string {
  return `${attestation.key_id}\u0000${attestation.hmac}`;
}

/**
 * A ledger in memory, for one process. Only attestations that verified (made with a configured key) are
 * recorded, each for at most twice the clock skew, so its size is bounded by what the trusted channel sends;
 * entries past their expiry are dropped as the ledger grows.
 */
export function createMemoryAttestationLedger(): MemoryAttestationLedger {
  const used = new Map<string, number>();
  let pruneAt = 1024;
  return {
    use(key, expiresAt, now) {
      const nowMs = now.getTime();
      if (used.size >= pruneAt) {
        for (const [k, until] of used) if (until < nowMs) used.delete(k);
        pruneAt = Math.max(1024, used.size * 2);
      }
      const until = used.get(key);
      if (until !== undefined && until >= nowMs) return false;
      used.set(key, expiresAt.getTime());
      return true;
    },
  };
}

function replayedReason(attestation: TrustedChannelAttestation, what: string): GraphReason {
  return {
    code: "attestation_replayed",
    message:
      `the trusted-channel attestation for ${what} (made at ${attestation.timestamp}) was already used: ` +
      "an attestation is good for one request; have the trusted channel sign this one afresh",
  };
}

/** The refusal when the ledger cannot answer; the ledger's error is not told (it goes back to the caller). */
function uncheckedReason(what: string, why?: string): GraphReason {
  const because = why !== undefined ? ` (${why})` : "";
  return {
    code: "attestation_replayed",
    message: `the trusted-channel attestation for ${what} could not be checked against those already used${because}, so it is refused`,
  };
}

/**
 * Uses a verified attestation once in `ledger`: null the first time, the `attestation_replayed` reason after,
 * or, from a ledger that answers asynchronously, a promise of either. It is kept until it goes stale
 * (`timestamp` + `skewSeconds`). A ledger that throws or rejects refuses (fails closed).
 */
export function spendAttestation(
  attestation: TrustedChannelAttestation,
  what: string,
  ledger: AttestationLedger,
  skewSeconds: number,
  now: Date,
): GraphReason | null | Promise<GraphReason | null> {
  const judged = (first: boolean): GraphReason | null => (first === true ? null : replayedReason(attestation, what));
  try {
    const expiresAt = new Date(Date.parse(attestation.timestamp) + skewSeconds * 1000);
    const answer = ledger.use(attestationKey(attestation), expiresAt, now);
    if (!(answer instanceof Promise)) return judged(answer);
    return answer.then(judged, () => uncheckedReason(what));
  } catch {
    return uncheckedReason(what);
  }
}

/**
 * {@link spendAttestation} for a check that cannot wait (`checkConsentGraph`): a ledger that answers
 * asynchronously refuses (its answer is left to settle; the pipeline's graph source waits for such a ledger).
 */
export function useAttestationOnce(
  attestation: TrustedChannelAttestation,
  what: string,
  ledger: AttestationLedger,
  skewSeconds: number,
  now: Date,
): GraphReason | null {
  const reason = spendAttestation(attestation, what, ledger, skewSeconds, now);
  if (!(reason instanceof Promise)) return reason;
  reason.catch(() => undefined);
  return uncheckedReason(what, "the ledger answers asynchronously; judge through the pipeline's graph source");
}

/**
 * The graph source's verdict on `request`, with the request's attestation spent in `ledger` when the verdict
 * says it verified (`trusted_channel_verified`): unchanged the first time, a refusal (`attestation_replayed`,
 * before the verdict's own reasons) when it was already used or the ledger could not answer. Called once per
 * request, after the graph has judged it however many times it needed; a promise when the ledger answers
 * asynchronously.
 */
export function spendVerifiedAttestation(
  verdict: SourceVerdict | null,
  request: ActionRequest,
  ledger: AttestationLedger,
  skewSeconds: number,
  now: Date,
): SourceVerdict | null | Promise<SourceVerdict | null> {
  const attestation = request.graph?.attestation;
  if (verdict === null || attestation === undefined) return verdict;
  if (!verdict.reasons.some((r) => r.code === "trusted_channel_verified")) return verdict;
  const rule = `${request.graph?.domain ?? ""}.${request.graph?.action ?? ""}`;
  const refused = (replayed: GraphReason | null): SourceVerdict => {
    if (replayed === null) return verdict;
    return {
      ...verdict,
      route: "refuse",
      reasons: [{ source: "graph", code: replayed.code, message: replayed.message, rule }, ...verdict.reasons],
    };
  };
  const replayed = spendAttestation(attestation, `\`${rule}\``, ledger, skewSeconds, now);
  return replayed instanceof Promise ? replayed.then(refused) : refused(replayed);
}
