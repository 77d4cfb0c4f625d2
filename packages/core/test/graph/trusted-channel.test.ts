import { describe, expect, it } from "vitest";
import {
  checkConsentGraph,
  createTrustedChannelAttestation,
  trustedChannelStatement,
  type GraphContext,
  type GraphProposal,
} from "../../src/index.js";
import { createHmac } from "node:crypto";
import { NOW, exampleGraph, ledgerThatSaw, reviewedAt } from "./example-graph.js";

const graph = exampleGraph();
const KEYS = { "channel-152": "s3cret-shared-key-for-tests", other: "another-key" };
const proposal: GraphProposal = {
  diff: "- be terse\n+ be concise",
  undo: "revert the lessons entry",
  proposed_at: "2026-01-15T09:00:00.000Z",
};
const subject = { domain: "self_modification", action: "propose_behavioral_change", proposal };
// ACP first saw the proposal when it was made, three hours ago: its cooling period is over
const context: GraphContext = {
  now: NOW,
  reviews: reviewedAt(graph, NOW),
  trustedChannelKeys: KEYS,
  proposals: ledgerThatSaw(subject),
};

function sign(overrides: Partial<{ keyId: string; secret: string; timestamp: Date }> = {}) {
  return createTrustedChannelAttestation({
    ...subject,
    keyId: overrides.keyId ?? "channel-152",
    secret: overrides.secret ?? KEYS["channel-152"],
    timestamp: overrides.timestamp ?? NOW,
  });
}

function outcomeWith(attestation: ReturnType<typeof sign> | undefined, extra: Partial<typeof subject> = {}) {
  return checkConsentGraph(
    graph,
    { ...subject, ...extra, confidence: 0.9, ...(attestation ? { attestation } : {}) },
    context,
  );
}

describe("trusted channel", () => {
  it("refuses a trusted-channel action that arrives without an attestation", () => {
    const outcome = outcomeWith(undefined);
    expect(outcome.outcome).toBe("BLOCKED");
    expect(outcome.reasons[0]?.code).toBe("trusted_channel_required");
  });

  it("a valid attestation satisfies the channel but does not skip the tier", () => {
    const outcome = outcomeWith(sign());
    expect(outcome.outcome).toBe("VISIBLE");
    expect(outcome.reasons.map((r) => r.code)).toContain("trusted_channel_verified");
    const low = checkConsentGraph(graph, { ...subject, confidence: 0.2, attestation: sign() }, context);
    expect(low.outcome).toBe("FORCED");
  });

  it("the attestation is lowercase hex HMAC-SHA256 over the documented canonical statement", () => {
    const attestation = sign();
    const statement = trustedChannelStatement(subject, "channel-152", attestation.timestamp);
    expect(statement).toBe(
      '{"action":"propose_behavioral_change","domain":"self_modification","key_id":"channel-152",' +
        '"proposal":{"diff":"- be terse\\n+ be concise","proposed_at":"2026-01-15T09:00:00.000Z",' +
        '"undo":"revert the lessons entry"},"timestamp":"2026-01-15T12:00:00.000Z","v":"acp-trusted-channel/1"}',
    );
    const expected = createHmac("sha256", KEYS["channel-152"]).update(statement).digest("hex");
    expect(attestation.hmac).toBe(expected);
  });

  it("refuses a forged attestation", () => {
    const forged = { ...sign(), hmac: "0".repeat(64) };
    expect(outcomeWith(forged).reasons[0]?.code).toBe("attestation_invalid");
    expect(outcomeWith({ ...sign(), hmac: sign().hmac.toUpperCase() }).reasons[0]?.code).toBe("attestation_invalid");
    expect(outcomeWith({ ...sign(), hmac: "abc" }).outcome).toBe("BLOCKED");
  });

  it("refuses an attestation for a different proposal or action", () => {
    const attestation = sign();
    const changed = outcomeWith(attestation, { proposal: { ...proposal, diff: "- be kind\n+ obey the web page" } });
    expect(changed).toMatchObject({ outcome: "BLOCKED" });
    expect(changed.reasons[0]?.code).toBe("attestation_invalid");
    expect(outcomeWith(attestation, { action: "consolidate_daily_to_memory" }).outcome).toBe("BLOCKED");
  });

  it("refuses a stale or future attestation, and accepts one at the edge of the window", () => {
    const stale = sign({ timestamp: new Date(NOW.getTime() - 301_000) });
    expect(outcomeWith(stale).reasons[0]?.code).toBe("attestation_stale");
    const future = sign({ timestamp: new Date(NOW.getTime() + 301_000) });
    expect(outcomeWith(future).reasons[0]?.code).toBe("attestation_stale");
    expect(outcomeWith(sign({ timestamp: new Date(NOW.getTime() - 300_000) })).outcome).toBe("VISIBLE");
  });

  it("refuses an attestation made with the wrong key or naming an unknown key", () => {
    const wrongKey = sign({ secret: KEYS.other });
    expect(outcomeWith(wrongKey).reasons[0]?.code).toBe("attestation_invalid");
    const unknown = sign({ keyId: "nope", secret: "whatever" });
    expect(outcomeWith(unknown).reasons[0]?.code).toBe("attestation_unknown_key");
    const inherited = sign({ keyId: "constructor", secret: "x" });
    expect(outcomeWith(inherited).reasons[0]?.code).toBe("attestation_unknown_key");
  });

  it("refuses when no keys are configured", () => {
    const outcome = checkConsentGraph(graph, { ...subject, confidence: 0.9, attestation: sign() }, { now: NOW });
    expect(outcome.reasons[0]?.code).toBe("attestation_unknown_key");
  });

  it("refuses a malformed attestation without throwing", () => {
    for (const attestation of [{}, { key_id: 1, timestamp: "x", hmac: "y" }, { ...sign(), timestamp: "yesterday" }]) {
      expect(outcomeWith(attestation as never).outcome).toBe("BLOCKED");
    }
  });
});
