/**
 * A caller whose `server` is only its word is judged under several readings of it (ADR 0006), and with a
 * rate-limited rule every reading spends: each judging that spends would use the call's trusted-channel
 * attestation, and the second would read as a replay. `useAttestationOncePerCall` takes it once per call
 * (the later judgings told the first answer), so a fresh attestation is taken and a replay still refused.
 */
import { describe, expect, it } from "vitest";
import {
  compilePolicy,
  createMemoryAttestationLedger,
  createMemoryRateLimiter,
  createPipeline,
  graphSource,
  parsePolicy,
  policySource,
  type AttestationLedger,
} from "@acp/core";
import { anyServerPipelineOf, countOncePerCall, serverReadings, useAttestationOncePerCall } from "@acp/server";
import { CHANNEL_KEYS, PRUNE, PRUNE_CALL, TRUSTED_GRAPH, attest } from "./trusted-channel.js";

const POLICY = `version: "1"
default_action: ask
rules:
  - id: prune-limited
    match: { tool: prune }
    action: allow
    rate_limit: 100/minute
classify:
  - tool: prune
    server: memory
    category: write
`;

/** The call, for the server a `classify:` entry names. */
const CALL = { ...PRUNE_CALL, server: "memory" };

function pipelineOn(attestations: AttestationLedger) {
  const parsed = parsePolicy(POLICY, { file: "policy.yml" });
  if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join("; "));
  const limiter = countOncePerCall(createMemoryRateLimiter());
  const readings = serverReadings(parsed.value, undefined);
  expect(readings.length).toBeGreaterThan(0); // the call is judged under several readings
  return anyServerPipelineOf(parsed.value, undefined, (r, spend) =>
    createPipeline(
      [
        policySource(compilePolicy(r.policy), { rateLimiter: limiter, spendRateLimits: spend }),
        graphSource({
          graph: TRUSTED_GRAPH,
          context: { trustedChannelKeys: CHANNEL_KEYS, ...(spend ? { attestations } : {}) },
        }),
      ],
      { classify: r.policy.classify, annotations: "caller" },
    ),
  );
}

describe("a trusted-channel attestation judged under several readings of the caller's server", () => {
  it("is taken once per call: accepted the first time, refused as replayed the second", async () => {
    const shared = createMemoryAttestationLedger();
    let uses = 0;
    const counted: AttestationLedger = { use: (...args) => (uses++, shared.use(...args)) };
    const pipeline = pipelineOn(useAttestationOncePerCall(counted));
    const request = { ...CALL, graph: { ...PRUNE, attestation: attest(PRUNE, CALL) } };
    const first = await pipeline.decide(request, new Date());
    expect(first.route).toBe("accept");
    expect(uses).toBe(1);
    const again = await pipeline.decide(request, new Date());
    expect(again.route).toBe("refuse");
    expect(again.reasons.map((r) => r.code)).toContain("attestation_replayed");
  });

  it("would be refused as its own replay without it (the judgings that spend share one ledger)", async () => {
    const pipeline = pipelineOn(createMemoryAttestationLedger());
    const request = { ...CALL, graph: { ...PRUNE, attestation: attest(PRUNE, CALL) } };
    const decision = await pipeline.decide(request, new Date());
    expect(decision.reasons.map((r) => r.code)).toContain("attestation_replayed");
  });
});
