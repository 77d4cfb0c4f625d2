import type { KeyObject } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { AdmissionMode, AdmissionPolicyOptions } from "../admission/admission-config.js";
import {
  ADMISSION_TOKEN_HEADER,
  ADMISSION_TOKEN_TYPE,
  issuerKeys,
  verifyAdmissionToken,
  type AdmissionClaims,
  type TrustedIssuer,
} from "../admission/admission-token.js";
import { rangeKey, ReputationPolicy, subjectKey, type ReputationEvent } from "../admission/reputation.js";
import type { ClaimRuntime } from "./context.js";

/** The admission policy as the routes use it (built once from {@link AdmissionPolicyOptions}). */
export interface AdmissionPolicy {
  readonly mode: AdmissionMode;
  readonly issuers: readonly TrustedIssuer[];
  readonly keys: ReadonlyMap<string, KeyObject>;
  readonly audience: readonly string[] | undefined;
  readonly discountBits: number;
  readonly maxLifetimeMs: number;
  readonly reputation: ReputationPolicy;
  /** Whether persistent reputation is read and charged (every mode but `pow`). */
  readonly persistent: boolean;
}

/** Builds the policy; throws on an issuer key that is not Ed25519 or `issuer-required` without issuers. */
export function createAdmissionPolicy(o: AdmissionPolicyOptions = {}): AdmissionPolicy {
  const mode = o.mode ?? "pow+reputation";
  const issuers = o.issuers ?? [];
  if (mode === "issuer-required" && issuers.length === 0)
    throw new Error("claim admission: mode `issuer-required` needs at least one trusted issuer");
  return {
    mode,
    issuers,
    keys: issuerKeys(issuers),
    audience: o.audience,
    discountBits: o.tokenDiscountBits ?? 4,
    maxLifetimeMs: (o.maxTokenLifetimeDays ?? 30) * 86_400_000,
    reputation: new ReputationPolicy(o.reputation),
    persistent: mode !== "pow",
  };
}

/** What a creation (or a challenge for one) gets. */
export type AdmissionDecision =
  | { readonly kind: "refuse" }
  | { readonly kind: "limited"; readonly retryAfterS: number }
  | {
      readonly kind: "admit";
      readonly difficulty: number;
      /** What the challenge is bound to: "" for anonymous, the token's keyed hash otherwise. */
      readonly binding: string;
      readonly sourceKey: string;
      readonly token?: AdmissionClaims & { readonly hash: string; readonly subjectKey: string };
    };

/** The audiences a token may name for this request. */
function audiences(rt: ClaimRuntime, req: FastifyRequest): readonly string[] {
  return rt.policy.audience ?? [rt.origin(req, rt.hosts.api)];
}

/**
 * Decides admission for a challenge or creation request, looking nothing up about sandboxes: the token (if any)
 * is verified, its remaining uses checked; in `issuer-required` mode a missing token is refused; the caller's own
 * source (and subject) reputation may refuse it for a while or raise the difficulty; a valid token lowers it.
 * Every token problem — forged, expired, wrong audience, used up, unknown issuer — is the same `refuse`.
 */
export async function decideAdmission(
  rt: ClaimRuntime,
  req: FastifyRequest,
  now: number,
  proof?: (binding: string) => boolean,
): Promise<AdmissionDecision> {
  // An error inside the decision (the store unreachable, say) never admits: it is a refusal.
  return decide(rt, req, now, proof).catch((): AdmissionDecision => ({ kind: "refuse" }));
}

async function decide(
  rt: ClaimRuntime,
  req: FastifyRequest,
  now: number,
  proof: ((binding: string) => boolean) | undefined,
): Promise<AdmissionDecision> {
  const raw = req.headers[ADMISSION_TOKEN_HEADER];
  const source = rangeKey(rt.facts(req).source);
  let token: (AdmissionClaims & { hash: string; subjectKey: string }) | undefined;
  if (raw !== undefined) {
    const v =
      typeof raw === "string"
        ? verifyAdmissionToken(raw, {
            issuers: rt.policy.keys,
            audience: audiences(rt, req),
            nowMs: now,
            maxLifetimeMs: rt.policy.maxLifetimeMs,
          })
        : undefined;
    if (v === undefined || !v.ok) return { kind: "refuse" };
    const hash = rt.box.hash("admission_token", `${v.claims.kid}\0${v.claims.jti}`);
    token = { ...v.claims, hash, subjectKey: subjectKey(v.claims.kid, v.claims.sub) };
  } else if (rt.policy.mode === "issuer-required") return { kind: "refuse" };
  // At creation the proof-of-work (bound to the token, or to nothing) is checked before the store is asked.
  const binding = token === undefined ? "" : `token:${token.hash}`;
  if (proof !== undefined && !proof(binding)) return { kind: "refuse" };
  if (token !== undefined && (await rt.store.admissionTokenUses(token.hash)) >= token.maxUses)
    return { kind: "refuse" };

  let extra = 0;
  if (rt.policy.persistent) {
    const keys = token === undefined ? [source] : [source, token.subjectKey];
    const scores = await rt.store.reputation(keys, rt.policy.reputation.halfLifeMs, now);
    // With a token the issuer vouches for the agent: its subject decides refusal, its address only adds bits.
    const refusedMs = rt.policy.reputation.refusedForMs(scores[keys.length - 1] ?? 0);
    if (refusedMs > 0) return { kind: "limited", retryAfterS: Math.ceil(refusedMs / 1000) };
    extra = Math.max(...scores.map((s) => rt.policy.reputation.extraBits(s)));
  }
  const base = rt.admission.difficulty(rt.facts(req).source, now) + extra;
  const discount = token === undefined ? 0 : rt.policy.discountBits;
  const difficulty = Math.max(1, Math.min(rt.admission.maxDifficulty, base - discount));
  return {
    kind: "admit",
    difficulty,
    binding,
    sourceKey: source,
    ...(token === undefined ? {} : { token }),
  };
}

/** The `admission` section of discovery: what is accepted, and how to present a token. */
export function admissionDiscovery(rt: ClaimRuntime, req: FastifyRequest): Record<string, unknown> {
  const p = rt.policy;
  return {
    mode: p.mode,
    proof_of_work: "required",
    issuer_token: p.mode === "issuer-required" ? "required" : p.issuers.length > 0 ? "optional" : "not_accepted",
    ...(p.issuers.length === 0
      ? {}
      : {
          token_header: "ACP-Admission-Token",
          token_type: ADMISSION_TOKEN_TYPE,
          token_alg: "EdDSA",
          token_audience: audiences(rt, req),
          token_max_lifetime_days: p.maxLifetimeMs / 86_400_000,
          token_pow_discount_bits: p.discountBits,
          issuers: p.issuers.map((i) => ({ kid: i.kid, ...(i.name === undefined ? {} : { name: i.name }) })),
          description:
            "send the token in the ACP-Admission-Token header on GET /v1/sandboxes/challenge and on POST /v1/sandboxes (the challenge is bound to it); each creation spends one of its max_uses (default 1)",
        }),
    reputation: p.persistent
      ? { persistent: true, half_life_hours: p.reputation.halfLifeMs / 3_600_000 }
      : { persistent: false },
  };
}

/** Extra proof-of-work bits from the caller's own range reputation (claim challenges, §19.2 same difficulty). */
export async function reputationBits(rt: ClaimRuntime, req: FastifyRequest, now: number): Promise<number> {
  if (!rt.policy.persistent) return 0;
  const [score = 0] = await rt.store.reputation([rangeKey(rt.facts(req).source)], rt.policy.reputation.halfLifeMs, now);
  return rt.policy.reputation.extraBits(score);
}

/**
 * Charges reputation for an event: the caller's range, plus (for a sandbox) the range and subject that created it.
 * The answer to the request is already decided; a failed write loses this one charge and changes nothing else.
 */
export async function chargeEvent(
  rt: ClaimRuntime,
  req: FastifyRequest,
  event: ReputationEvent,
  now: number,
  sandboxId?: string,
): Promise<void> {
  if (!rt.policy.persistent) return;
  const points = rt.policy.reputation.pointsFor(event);
  if (points <= 0) return;
  await rt.store
    .chargeReputation({
      keys: [rangeKey(rt.facts(req).source)],
      ...(sandboxId === undefined ? {} : { sandboxId }),
      charge: { points, halfLifeMs: rt.policy.reputation.halfLifeMs },
      now,
    })
    .catch(() => undefined);
}
