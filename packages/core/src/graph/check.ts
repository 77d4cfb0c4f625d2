/**
 * `checkConsentGraph`: classify one graph target as AUTONOMOUS, VISIBLE, FORCED or BLOCKED.
 * Fails closed: malformed input, an unknown domain, an unclassified action or any error is BLOCKED.
 */
import type { GraphTarget } from "../request/index.js";
import { checkConsentDecay } from "./decay.js";
import { checkProposal } from "./proposal.js";
import { useAttestationOnce } from "./attestation-ledger.js";
import { DEFAULT_CLOCK_SKEW_SECONDS, verifyTrustedChannelAttestation } from "./trusted-channel.js";
import { closestName } from "./suggest.js";
import type {
  ConsentGraph,
  GraphCall,
  GraphContext,
  GraphDomain,
  GraphOutcome,
  GraphOutcomeKind,
  GraphReason,
  GraphTier,
} from "./types.js";

/** VISIBLE from this confidence up, unless the context says otherwise. */
export const DEFAULT_CONFIDENCE_THRESHOLD = 0.85;

/** A graph target, optionally with the tool call it came from (bound into attestations). */
export type GraphCheckTarget = GraphTarget & { readonly call?: GraphCall };

interface Coordinates {
  readonly domain: string;
  readonly action: string;
  readonly tier: GraphTier | null;
  readonly effective_tier: GraphTier | null;
  readonly trust_level?: GraphDomain["trust_level"];
}

function outcome(
  kind: GraphOutcomeKind,
  at: Coordinates,
  reasons: readonly GraphReason[],
  deferredUntil?: string,
): GraphOutcome {
  return Object.freeze({
    outcome: kind,
    tier: at.tier,
    effective_tier: at.effective_tier,
    domain: at.domain,
    action: at.action,
    reasons: Object.freeze(reasons.map((r) => Object.freeze({ ...r }))),
    ...(deferredUntil !== undefined ? { deferred_until: deferredUntil } : {}),
    ...(at.trust_level !== undefined ? { trust_level: at.trust_level } : {}),
  });
}

/** The widest clock skew a context may allow (a day): attestations and review times beyond it are refused. */
export const MAX_CLOCK_SKEW_SECONDS = 86_400;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isUnitInterval(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1;
}

function checkInputs(graph: unknown, target: unknown, context: unknown): GraphReason | null {
  const bad = (message: string): GraphReason => ({ code: "invalid_input", message });
  if (typeof graph !== "object" || graph === null) return bad("no consent graph was given");
  const g = graph as Partial<ConsentGraph>;
  if (typeof g.domains !== "object" || g.domains === null) return bad("the consent graph has no domains object");
  if (typeof target !== "object" || target === null) return bad("no graph target (domain and action) was given");
  const t = target as Partial<GraphTarget>;
  if (typeof t.domain !== "string" || t.domain.length === 0 || t.domain.length > 256) {
    return bad("the graph target's domain must be a non-empty string");
  }
  if (typeof t.action !== "string" || t.action.length === 0 || t.action.length > 256) {
    return bad("the graph target's action must be a non-empty string");
  }
  if (t.confidence !== undefined && !isUnitInterval(t.confidence)) {
    return { code: "invalid_confidence", message: `confidence ${String(t.confidence)} is not a number from 0 to 1` };
  }
  if (typeof context !== "object" || context === null) return bad("no decision context (clock) was given");
  const c = context as Partial<GraphContext>;
  if (!(c.now instanceof Date) || Number.isNaN(c.now.getTime())) return bad("the decision clock is not a valid time");
  if (c.threshold !== undefined && !isUnitInterval(c.threshold)) {
    return bad(`the confidence threshold ${String(c.threshold)} is not a number from 0 to 1`);
  }
  const skew = c.clockSkewSeconds;
  if (skew !== undefined && !(typeof skew === "number" && skew >= 0 && skew <= MAX_CLOCK_SKEW_SECONDS)) {
    // NaN or Infinity would read every future review as current and every attestation as fresh
    return bad(`the clock skew ${String(skew)} is not a number of seconds from 0 to ${MAX_CLOCK_SKEW_SECONDS}`);
  }
  if (c.reviews !== undefined && !(isRecord(c.reviews) && isRecord(c.reviews.domains))) {
    return bad("the review record is not an object of domain reviews");
  }
  if (c.trustedChannelKeys !== undefined && !isRecord(c.trustedChannelKeys)) {
    return bad("the trusted-channel keys are not an object of key id → secret");
  }
  if (c.proposals !== undefined && !(isRecord(c.proposals) && typeof c.proposals.firstSeen === "function")) {
    return bad("the proposal ledger has no `firstSeen`");
  }
  if (c.attestations !== undefined && !(isRecord(c.attestations) && typeof c.attestations.use === "function")) {
    return bad("the attestation ledger has no `use`");
  }
  return null;
}

/** The declared tier of an action; when listed in several tiers, the strictest. Null when unclassified. */
export function tierOf(domain: GraphDomain, action: string): GraphTier | null {
  if (domain.blocked.includes(action)) return "blocked";
  if (domain.requires_approval.includes(action)) return "requires_approval";
  if (domain.autonomous.includes(action)) return "autonomous";
  return null;
}

function unclassified(graph: ConsentGraph, target: GraphTarget): GraphOutcome | GraphDomain {
  const { domain: name, action } = target;
  const at: Coordinates = { domain: name, action, tier: null, effective_tier: null };
  const domain = Object.hasOwn(graph.domains, name) ? graph.domains[name] : undefined;
  if (domain === undefined) {
    const near = closestName(name, Object.keys(graph.domains));
    const hint = near !== undefined ? ` (did you mean \`${near}\`?)` : "";
    const message = `domain \`${name}\` is not in the consent graph, so nothing in it is allowed${hint}`;
    return outcome("BLOCKED", at, [{ code: "unclassified_domain", message }]);
  }
  if (tierOf(domain, action) === null) {
    const known = [...domain.autonomous, ...domain.requires_approval, ...domain.blocked];
    const near = closestName(action, known);
    const hint = near !== undefined ? ` (did you mean \`${near}\`?)` : "";
    const message = `\`${name}.${action}\` is in none of the tiers of \`${name}\`; unclassified actions are never allowed${hint}`;
    return outcome("BLOCKED", { ...at, ...withTrust(domain) }, [{ code: "unclassified_action", message }]);
  }
  return domain;
}

function withTrust(domain: GraphDomain): { trust_level?: GraphDomain["trust_level"] } {
  return domain.trust_level !== undefined ? { trust_level: domain.trust_level } : {};
}

/**
 * Classifies a target against the graph. Order: input checks, domain, tier (blocked wins), trusted
 * channel, consent decay, proposal constraints (diff, undo, cooling period), then confidence.
 * Never throws; never more permissive than the declared tier.
 */
export function checkConsentGraph(graph: ConsentGraph, target: GraphCheckTarget, context: GraphContext): GraphOutcome {
  const fallback: Coordinates = {
    domain: typeof target?.domain === "string" ? target.domain : "",
    action: typeof target?.action === "string" ? target.action : "",
    tier: null,
    effective_tier: null,
  };
  try {
    const invalid = checkInputs(graph, target, context);
    if (invalid !== null) return outcome("BLOCKED", fallback, [invalid]);
    return decide(graph, target, context);
  } catch (err) {
    const message = `the consent graph check failed, so the action is refused: ${err instanceof Error ? err.message : String(err)}`;
    return outcome("BLOCKED", fallback, [{ code: "graph_error", message }]);
  }
}

function decide(graph: ConsentGraph, target: GraphCheckTarget, context: GraphContext): GraphOutcome {
  const found = unclassified(graph, target);
  if ("outcome" in found) return found;
  const domain = found;
  const { domain: name, action } = target;
  const tier = tierOf(domain, action) ?? "blocked";
  const what = `\`${name}.${action}\``;
  const at: Coordinates = { domain: name, action, tier, effective_tier: tier, ...withTrust(domain) };
  if (tier === "blocked") {
    const message = `${what} is blocked: never execute it; the operator is alerted that it was attempted`;
    return outcome("BLOCKED", at, [{ code: "blocked_action", message }]);
  }
  const notes: GraphReason[] = [];
  if (domain.trusted_channel_required?.includes(action) === true) {
    const denied = verifyTrustedChannelAttestation(target.attestation, target, {
      keys: context.trustedChannelKeys,
      now: context.now,
      ...(context.clockSkewSeconds !== undefined ? { clockSkewSeconds: context.clockSkewSeconds } : {}),
    });
    if (denied !== null) return outcome("BLOCKED", at, [denied]);
    // verified: used once (a replay of the same attestation inside its window is refused)
    if (context.attestations !== undefined && target.attestation !== undefined) {
      const skew = context.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
      const replayed = useAttestationOnce(target.attestation, what, context.attestations, skew, context.now);
      if (replayed !== null) return outcome("BLOCKED", at, [replayed]);
    }
    notes.push({ code: "trusted_channel_verified", message: `${what} arrived through the signed trusted channel` });
  }
  const decayed = tier === "autonomous" ? checkConsentDecay(graph, name, domain, context) : null;
  if (tier === "autonomous" && decayed === null) {
    return outcome("AUTONOMOUS", at, [
      { code: "autonomous_action", message: `${what} is autonomous: execute it and log it` },
      ...notes,
    ]);
  }
  if (decayed !== null) notes.push(decayed);
  const effective: Coordinates = { ...at, effective_tier: "requires_approval" };
  if (tier === "requires_approval") {
    const proposal = checkProposal(domain, target, context, what);
    if (proposal.blocked !== undefined) return outcome("BLOCKED", effective, [proposal.blocked, ...notes]);
    if (proposal.deferredUntil !== undefined) {
      return outcome("FORCED", effective, [...proposal.reasons, ...notes], proposal.deferredUntil);
    }
    notes.push(...proposal.reasons);
  }
  return byConfidence(effective, target.confidence, context.threshold ?? DEFAULT_CONFIDENCE_THRESHOLD, notes);
}

function byConfidence(
  at: Coordinates,
  confidence: number | undefined,
  threshold: number,
  notes: GraphReason[],
): GraphOutcome {
  const what = `\`${at.domain}.${at.action}\``;
  if (confidence !== undefined && confidence >= threshold) {
    const message = `${what} requires approval and confidence ${confidence} is at or above ${threshold}: proceed, then notify the operator`;
    return outcome("VISIBLE", at, [{ code: "visible_notify", message }, ...notes]);
  }
  const given = confidence === undefined ? "no confidence was given" : `confidence ${confidence} is below ${threshold}`;
  const message = `${what} requires approval and ${given}: ask the operator first`;
  return outcome("FORCED", at, [{ code: "approval_required", message }, ...notes]);
}
