/**
 * A trusted-channel attestation is good for one request: with an attestation ledger in the context (the
 * pipeline's graph source keeps one by default), the same attestation sent again inside its window is
 * BLOCKED `attestation_replayed`; a fresh one for the same call is taken. Before, the graph held no state and
 * an attestation seen once (in a log, a proxy, a prompt) could be replayed for five minutes. A ledger that
 * answers asynchronously (a store shared by several nodes) is waited for by the graph source, a rejected
 * answer refuses, and a one-off `checkConsentGraph`, which cannot wait, refuses.
 */
import { describe, expect, it } from "vitest";
import {
  checkConsentGraph,
  createMemoryAttestationLedger,
  createPipeline,
  createTrustedChannelAttestation,
  graphSource,
  type ActionRequest,
  type AttestationLedger,
} from "../../src/index.js";
import { NOW, exampleGraph, reviewedAt } from "./example-graph.js";

const graph = exampleGraph();
const keys = { k: "secret-key" };
const base = { domain: "self_modification", action: "prune_stale_memory" };
const call = { tool: "prune", arguments: { text: "hi" } };

function attested(at: Date) {
  return createTrustedChannelAttestation({ ...base, call, keyId: "k", secret: "secret-key", timestamp: at });
}

/** A proposal ledger that answers asynchronously, so the graph source judges a request twice. */
function asyncProposals() {
  const seen = new Map<string, Date>();
  return {
    firstSeen: (key: string, now: Date): Promise<Date> => {
      if (!seen.has(key)) seen.set(key, now);
      return Promise.resolve(seen.get(key) ?? now);
    },
  };
}

/** A behavioural-change proposal (cooling period) sent through the trusted channel. */
function attestedProposal(): ActionRequest {
  const subject = {
    domain: "self_modification",
    action: "propose_behavioral_change",
    proposal: { diff: "- old rule\n+ new rule", undo: "restore the old rule", proposed_at: NOW.toISOString() },
  };
  const attestation = createTrustedChannelAttestation({
    ...subject,
    call,
    keyId: "k",
    secret: "secret-key",
    timestamp: NOW,
  });
  return { ...call, graph: { ...subject, attestation } };
}

function check(attestation: ReturnType<typeof attested>, context: { attestations?: AttestationLedger; now?: Date }) {
  return checkConsentGraph(
    graph,
    { ...base, attestation, call },
    { reviews: reviewedAt(graph, NOW), trustedChannelKeys: keys, ...context, now: context.now ?? NOW },
  );
}

describe("a trusted-channel attestation used twice", () => {
  it("is refused the second time inside its window (attestation_replayed); a fresh one is taken", () => {
    const attestations = createMemoryAttestationLedger();
    const first = attested(NOW);
    expect(check(first, { attestations }).outcome).not.toBe("BLOCKED");
    const again = check(first, { attestations, now: new Date(NOW.getTime() + 60_000) });
    expect(again.outcome).toBe("BLOCKED");
    expect(again.reasons.map((r) => r.code)).toEqual(["attestation_replayed"]);
    expect(again.reasons[0]?.message).toMatch(/was already used: an attestation is good for one request/);
    const fresh = attested(new Date(NOW.getTime() + 1_000));
    expect(check(fresh, { attestations, now: new Date(NOW.getTime() + 2_000) }).outcome).not.toBe("BLOCKED");
  });

  it("spends nothing on an attestation that does not verify", () => {
    const attestations = createMemoryAttestationLedger();
    const forged = { ...attested(NOW), hmac: "0".repeat(64) };
    expect(check(forged, { attestations }).reasons.map((r) => r.code)).toEqual(["attestation_invalid"]);
    expect(check(attested(NOW), { attestations }).outcome).not.toBe("BLOCKED");
  });

  it("is refused when the ledger fails (fail closed), and the context's ledger must have `use`", () => {
    const broken: AttestationLedger = {
      use: () => {
        throw new Error("disk full");
      },
    };
    expect(check(attested(NOW), { attestations: broken }).reasons.map((r) => r.code)).toEqual(["attestation_replayed"]);
    const notALedger = {} as unknown as AttestationLedger;
    expect(check(attested(NOW), { attestations: notALedger }).reasons.map((r) => r.code)).toEqual(["invalid_input"]);
  });

  it("is not tracked without a ledger (a one-off check holds no state)", () => {
    const once = attested(NOW);
    expect(check(once, {}).outcome).not.toBe("BLOCKED");
    expect(check(once, {}).outcome).not.toBe("BLOCKED");
  });

  it("is refused by the pipeline's graph source, which keeps a ledger by default", async () => {
    const pipeline = createPipeline([
      graphSource({ graph, context: { reviews: reviewedAt(graph, NOW), trustedChannelKeys: keys } }),
    ]);
    const request: ActionRequest = { ...call, graph: { ...base, attestation: attested(NOW) } };
    expect((await pipeline.decide(request, NOW)).route).toBe("accept");
    const replay = await pipeline.decide(request, new Date(NOW.getTime() + 1_000));
    expect(replay.route).toBe("refuse");
    expect(replay.reasons.map((r) => r.code)).toContain("attestation_replayed");
  });

  it("is spent once by the graph source that judges a request twice (an asynchronous proposal ledger)", async () => {
    const proposals = asyncProposals();
    const pipeline = createPipeline([
      graphSource({ graph, context: { reviews: reviewedAt(graph, NOW), trustedChannelKeys: keys, proposals } }),
    ]);
    const request = attestedProposal();
    const first = await pipeline.decide(request, NOW);
    // refused for its cooling period, not as a replay: the two passes spent the attestation once
    expect(first.reasons.map((r) => r.code)).toContain("cooling_period");
    expect(first.reasons.map((r) => r.code)).not.toContain("attestation_replayed");
    const replay = await pipeline.decide(request, new Date(NOW.getTime() + 1_000));
    expect(replay.reasons.map((r) => r.code)).toContain("attestation_replayed");
  });
});

describe("the memory attestation ledger", () => {
  it("forgets a key only once it has expired", () => {
    const ledger = createMemoryAttestationLedger();
    const until = new Date(NOW.getTime() + 300_000);
    expect(ledger.use("a", until, NOW)).toBe(true);
    expect(ledger.use("a", until, until)).toBe(false);
    expect(ledger.use("a", until, new Date(until.getTime() + 1))).toBe(true);
  });

  it("keeps every unexpired key however many it holds", () => {
    const ledger = createMemoryAttestationLedger();
    const until = new Date(NOW.getTime() + 300_000);
    for (let i = 0; i < 5000; i++) expect(ledger.use(`k${i}`, until, NOW)).toBe(true);
    for (let i = 0; i < 5000; i += 499) expect(ledger.use(`k${i}`, until, NOW)).toBe(false);
  });
});

/** The memory ledger behind a promise, counting the uses it was asked. */
function asyncLedger(): AttestationLedger & { uses: number } {
  const memory = createMemoryAttestationLedger();
  const ledger = {
    uses: 0,
    use(key: string, expiresAt: Date, now: Date): Promise<boolean> {
      ledger.uses += 1;
      return new Promise((resolve) => setTimeout(() => resolve(memory.use(key, expiresAt, now)), 1));
    },
  };
  return ledger;
}

function pipelineWith(
  attestations: AttestationLedger,
  proposals?: { firstSeen: (k: string, n: Date) => Promise<Date> },
) {
  const context = {
    reviews: reviewedAt(graph, NOW),
    trustedChannelKeys: keys,
    attestations,
    ...(proposals !== undefined ? { proposals } : {}),
  };
  return createPipeline([graphSource({ graph, context })]);
}

describe("an asynchronous attestation ledger", () => {
  it("is waited for by the graph source: the first use is taken, the replay refused", async () => {
    const ledger = asyncLedger();
    const pipeline = pipelineWith(ledger);
    const request: ActionRequest = { ...call, graph: { ...base, attestation: attested(NOW) } };
    expect((await pipeline.decide(request, NOW)).route).toBe("accept");
    const replay = await pipeline.decide(request, new Date(NOW.getTime() + 1_000));
    expect(replay.route).toBe("refuse");
    expect(replay.reasons[0]?.code).toBe("attestation_replayed");
    expect(ledger.uses).toBe(2);
  });

  it("refuses when the ledger rejects, without telling the ledger's error", async () => {
    const broken: AttestationLedger = { use: () => Promise.reject(new Error("connection to 10.0.0.5 refused")) };
    const decision = await pipelineWith(broken).decide(
      { ...call, graph: { ...base, attestation: attested(NOW) } },
      NOW,
    );
    expect(decision.route).toBe("refuse");
    expect(decision.reasons[0]?.code).toBe("attestation_replayed");
    expect(decision.reasons[0]?.message).toMatch(/could not be checked against those already used/);
    expect(JSON.stringify(decision.reasons)).not.toContain("10.0.0.5");
  });

  it("is asked once per request when an asynchronous proposal ledger makes the graph judge twice", async () => {
    const ledger = asyncLedger();
    const proposals = asyncProposals();
    const request = attestedProposal();
    const first = await pipelineWith(ledger, proposals).decide(request, NOW);
    expect(first.reasons.map((r) => r.code)).toContain("cooling_period");
    expect(first.reasons.map((r) => r.code)).not.toContain("attestation_replayed");
    expect(ledger.uses).toBe(1);
  });

  it("spends nothing on an attestation that does not verify", async () => {
    const ledger = asyncLedger();
    const forged = { ...attested(NOW), hmac: "0".repeat(64) };
    const decision = await pipelineWith(ledger).decide({ ...call, graph: { ...base, attestation: forged } }, NOW);
    expect(decision.reasons.map((r) => r.code)).toContain("attestation_invalid");
    expect(ledger.uses).toBe(0);
  });

  it("refuses in a one-off checkConsentGraph, which cannot wait for it", () => {
    const outcome = checkConsentGraph(
      graph,
      { ...base, attestation: attested(NOW), call },
      { reviews: reviewedAt(graph, NOW), trustedChannelKeys: keys, attestations: asyncLedger(), now: NOW },
    );
    expect(outcome.outcome).toBe("BLOCKED");
    expect(outcome.reasons.map((r) => r.code)).toEqual(["attestation_replayed"]);
    expect(outcome.reasons[0]?.message).toMatch(/answers asynchronously/);
  });
});
