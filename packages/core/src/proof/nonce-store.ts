/**
 * Spent nonces: an approval is single use, so accepting it spends its nonce, and a nonce spent once is
 * refused forever after (at least until its approval has expired, when expiry refuses it anyway).
 */
export interface NonceStore {
  /**
   * Marks a nonce spent. Returns true when this call spent it, false when it was already spent
   * (a replay). Must be atomic: of two concurrent calls with one nonce, exactly one returns true.
   * A store that forgets spent nonces (prunes them) also returns false for a nonce whose approval ended
   * no later than the latest one it forgot ({@link NonceStore.forgottenThrough}): such a spend cannot be
   * told from a fresh one, whatever the clock says now.
   */
  spend(nonce: string, requestId: string, expiresAtMs: number): boolean | Promise<boolean>;
  /**
   * The latest approval end (ms) whose nonce this store may have forgotten, if it forgot any: `spend`
   * refuses every nonce whose approval ended then or earlier. Lets a verifier say why
   * (`proof_expired`) rather than `proof_replayed`.
   */
  forgottenThrough?(): number | undefined | Promise<number | undefined>;
}

/** Most nonces a {@link createMemoryNonceStore} holds by default. */
export const MEMORY_NONCE_LIMIT = 100_000;

/** An in-memory nonce store: for tests and single-process tools. Forgets everything on restart. */
export interface MemoryNonceStore extends NonceStore {
  spend(nonce: string, requestId: string, expiresAtMs: number): boolean;
  /** Forgets nonces whose approvals expired before `nowMs`; returns how many. */
  prune(nowMs: number): number;
  forgottenThrough(): number | undefined;
  /** How many nonces are held. */
  readonly size: number;
}

/**
 * Creates an empty in-memory {@link NonceStore} holding at most `maxNonces` (default
 * {@link MEMORY_NONCE_LIMIT}): past it, the tenth whose approvals end first are forgotten, and from then on
 * a nonce whose approval ends no later than the latest forgotten is refused (a forgotten spend cannot be told
 * from a fresh one), as it is after {@link MemoryNonceStore.prune}.
 */
export function createMemoryNonceStore(options: { readonly maxNonces?: number } = {}): MemoryNonceStore {
  const max = Math.max(1, Math.floor(options.maxNonces ?? MEMORY_NONCE_LIMIT));
  const spent = new Map<string, number>();
  let forgotten = Number.NEGATIVE_INFINITY;
  const forget = (nonce: string, expiresAtMs: number): void => {
    spent.delete(nonce);
    forgotten = Math.max(forgotten, expiresAtMs);
  };
  return {
    spend(nonce, _requestId, expiresAtMs) {
      if (spent.has(nonce) || !(expiresAtMs > forgotten)) return false;
      if (spent.size >= max) {
        const oldest = [...spent].sort((a, b) => a[1] - b[1]).slice(0, Math.max(1, Math.ceil(max / 10)));
        for (const [n, at] of oldest) forget(n, at);
        if (!(expiresAtMs > forgotten)) return false;
      }
      spent.set(nonce, expiresAtMs);
      return true;
    },
    prune(nowMs) {
      let removed = 0;
      for (const [nonce, expiresAtMs] of spent) {
        if (expiresAtMs < nowMs) {
          forget(nonce, expiresAtMs);
          removed++;
        }
      }
      return removed;
    },
    forgottenThrough: () => (forgotten === Number.NEGATIVE_INFINITY ? undefined : forgotten),
    get size() {
      return spent.size;
    },
  };
}
