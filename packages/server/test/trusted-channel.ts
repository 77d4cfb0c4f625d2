/**
 * What the trusted-channel tests of `acp serve` share: a consent graph with trusted-channel actions of two
 * tiers, the configured key, a pipeline built on the stores' attestation ledger (as `acp serve` builds its
 * own), attestations made for a call, and a POST to `/v1/decide`.
 */
import {
  createPipeline,
  createTrustedChannelAttestation,
  graphSource,
  parseConsentGraph,
  type AttestationLedger,
  type ConsentGraph,
  type Pipeline,
  type TrustedChannelAttestation,
} from "@acp/core";
import type { StoresPipeline } from "@acp/server";

function graphOf(raw: unknown): ConsentGraph {
  const parsed = parseConsentGraph(JSON.stringify(raw));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.value;
}

/** `prune_stale_memory` autonomous and `consolidate_daily_to_memory` requiring approval, both held to the channel. */
export const TRUSTED_GRAPH = graphOf({
  self_modification: {
    autonomous: ["prune_stale_memory"],
    requires_approval: ["consolidate_daily_to_memory"],
    blocked: [],
    trusted_channel_required: ["prune_stale_memory", "consolidate_daily_to_memory"],
  },
});

/** The configured trusted-channel keys (key id → secret). */
export const CHANNEL_KEYS = { channel: "trusted-channel-secret-0123456789" };

/** The autonomous trusted-channel target, and the call it is attested for. */
export const PRUNE = { domain: "self_modification", action: "prune_stale_memory" };
export const PRUNE_CALL = { tool: "prune", arguments: { older_than_days: 30 } };

/** The pipeline on the stores' attestation ledger (the graph source keeps one in memory without it). */
export const trustedChannelPipeline: StoresPipeline = (_rateLimiter, _proposals, attestations?: AttestationLedger) =>
  createPipeline([
    graphSource({
      graph: TRUSTED_GRAPH,
      context: { trustedChannelKeys: CHANNEL_KEYS, ...(attestations !== undefined ? { attestations } : {}) },
    }),
  ]);

/** A pipeline that only checks (the simulator's): its own ledger in memory. */
export function checkingPipeline(): Pipeline {
  return createPipeline([graphSource({ graph: TRUSTED_GRAPH, context: { trustedChannelKeys: CHANNEL_KEYS } })]);
}

/** An attestation of `target` for `call`, made at `timestamp` with `keyId` and `secret` (the configured key). */
export function attest(
  target: { domain: string; action: string } = PRUNE,
  call: { tool: string; server?: string; arguments: Record<string, unknown> } = PRUNE_CALL,
  { timestamp = new Date(), keyId = "channel", secret = CHANNEL_KEYS.channel } = {},
): TrustedChannelAttestation {
  return createTrustedChannelAttestation({ ...target, call, keyId, secret, timestamp });
}

/** `POST {url}/v1/decide` with `body` as JSON. */
export function decideAt(url: string, body: unknown): Promise<Response> {
  return fetch(`${url}/v1/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}
