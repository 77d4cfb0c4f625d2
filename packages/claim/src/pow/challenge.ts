import { randomBytes } from "node:crypto";
import type { SecretBox } from "../secrets/keyed-hash.js";
import { checkPow } from "./leading-zeros.js";

/** What a challenge admits: creating a sandbox, or claiming one with a given code. */
export type ChallengePurpose = "create" | "claim";

/** A challenge as issued to a client (§7.1). */
export interface IssuedChallenge {
  readonly challenge: string;
  readonly difficulty: number;
  readonly algorithm: "sha256_leading_zeros";
  readonly expires_at: string;
}

/** Challenges live 5 minutes (§29). */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

/**
 * Issues a signed, stateless challenge `v1-{difficulty}-{expiresSec}-{random hex}-{tag}`. The tag binds the
 * difficulty, expiry, purpose and `binding` (for a claim: the keyed hash of the code), so a client cannot
 * lower the difficulty, stretch the expiry, or reuse a creation challenge for a claim. Single use is
 * enforced by whoever accepts it (the spent-challenge table).
 */
export function issueChallenge(
  box: SecretBox,
  purpose: ChallengePurpose,
  binding: string,
  difficulty: number,
  nowMs: number,
): IssuedChallenge {
  const expiresSec = Math.floor((nowMs + CHALLENGE_TTL_MS) / 1000);
  const head = `v1-${difficulty}-${expiresSec}-${randomBytes(16).toString("hex")}`;
  const tag = box.sign("pow", purpose, binding, head);
  return {
    challenge: `${head}-${tag}`,
    difficulty,
    algorithm: "sha256_leading_zeros",
    expires_at: new Date(expiresSec * 1000).toISOString(),
  };
}

/**
 * Whether `nonce` solves a challenge this provider issued for `purpose`/`binding`, unexpired at `nowMs`.
 * Does not look anything up; never throws.
 */
export function verifyChallenge(
  box: SecretBox,
  purpose: ChallengePurpose,
  binding: string,
  challenge: unknown,
  nonce: unknown,
  nowMs: number,
): boolean {
  if (typeof challenge !== "string" || typeof nonce !== "string" || challenge.length > 200) return false;
  const m = /^(v1-(\d{1,2})-(\d{1,12})-[0-9a-f]{32})-([0-9a-f]{32})$/.exec(challenge);
  if (m === null) return false;
  const [, head = "", difficulty = "", expires = "", tag = ""] = m;
  if (!box.equal(tag, box.sign("pow", purpose, binding, head))) return false;
  if (Number(expires) * 1000 <= nowMs) return false;
  return checkPow(challenge, nonce, Number(difficulty));
}

/** The difficulty a challenge states (0 for anything that is not one); trust it only after {@link verifyChallenge}. */
export function challengeDifficulty(challenge: unknown): number {
  const m = typeof challenge === "string" ? /^v1-(\d{1,2})-/.exec(challenge) : null;
  return m === null ? 0 : Number(m[1]);
}

/**
 * What a proof for a challenge whose difficulty is below what the caller now needs is told (`claim_challenge_stale`,
 * HTTP 409, at creation and at claim verification): nothing was spent, ask for a new challenge.
 */
export function staleChallengeMessage(needed: number): string {
  return `the proof-of-work difficulty has risen to ${needed} since this challenge was issued: get a new challenge`;
}
