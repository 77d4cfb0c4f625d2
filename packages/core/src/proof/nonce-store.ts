/**
 * Spent nonces: an approval is single use, so accepting it spends its nonce, and a nonce spent once is
 * refused forever after (at least until its approval has expired, when expiry refuses it anyway).
 */
export interface NonceStore {
  /**
   * Marks a nonce spent. Returns true when this call spent it, false when it was already spent
   * (a replay). Must be atomic: of two concurrent calls with one nonce, exactly one returns true.
   */
  spend(nonce: string, requestId: string, expiresAtMs: number): boolean | Promise<boolean>;
}

/** An in-memory nonce store: for tests and single-process tools. Forgets everything on restart. */
export interface MemoryNonceStore extends NonceStore {
  spend(nonce: string, requestId: string, expiresAtMs: number): boolean;
  /** Forgets nonces whose approvals expired before `nowMs`; returns how many. */
  prune(nowMs: number): number;
  /** How many nonces are held. */
  readonly size: number;
}

/** Creates an empty in-memory {@link NonceStore}. */
export function createMemoryNonceStore(): MemoryNonceStore {
  const spent = new Map<string, { requestId: string; expiresAtMs: number }>();
  return {
    spend(nonce, requestId, expiresAtMs) {
      if (spent.has(nonce)) return false;
      spent.set(nonce, { requestId, expiresAtMs });
      return true;
    },
    prune(nowMs) {
      let removed = 0;
      for (const [nonce, entry] of spent) {
        if (entry.expiresAtMs < nowMs) {
          spent.delete(nonce);
          removed++;
        }
      }
      return removed;
    },
    get size() {
      return spent.size;
    },
  };
}
