/**
 * The registry of authority tokens one session issued: issued → used, or issued → revoked. Expired entries are
 * dropped (an expired token is refused before the registry is consulted), so the registry stays small.
 */
import type { AuthorityTokenClaims } from "./authority-token.js";

/** Where one token stands. */
export type TokenStatus = "issued" | "used" | "revoked";

/** Issued, used and revoked tokens of one session. */
export class TokenRegistry {
  readonly #tokens = new Map<string, { claims: AuthorityTokenClaims; status: TokenStatus }>();

  /** Registers a newly issued token. */
  add(claims: AuthorityTokenClaims): void {
    this.#tokens.set(claims.id, { claims, status: "issued" });
  }

  /** The status of a token id, or undefined when this session did not issue it (or it expired and was dropped). */
  status(id: string): TokenStatus | undefined {
    return this.#tokens.get(id)?.status;
  }

  /** Marks a token used. */
  markUsed(id: string): void {
    const entry = this.#tokens.get(id);
    if (entry !== undefined) entry.status = "used";
  }

  /** Revokes every token not yet used; returns how many. */
  revokeAll(): number {
    let count = 0;
    for (const entry of this.#tokens.values()) {
      if (entry.status === "issued") {
        entry.status = "revoked";
        count++;
      }
    }
    return count;
  }

  /** Drops every token whose lifetime ended at or before `nowMs`. */
  purgeExpired(nowMs: number): void {
    for (const [id, entry] of this.#tokens) if (entry.claims.expires_at <= nowMs) this.#tokens.delete(id);
  }

  /** How many tokens are held (for tests of the cleanup). */
  get size(): number {
    return this.#tokens.size;
  }
}
