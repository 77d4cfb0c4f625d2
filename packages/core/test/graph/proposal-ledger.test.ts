import { describe, expect, it } from "vitest";
import {
  checkConsentGraph,
  createTrustedChannelAttestation,
  createMemoryProposalLedger,
  evaluateConsentGraph,
  graphSource,
  proposalKey,
  type ActionRequest,
  type GraphCheckTarget,
  type GraphContext,
  type GraphProposal,
} from "../../src/index.js";
import { createMemoryAttestationLedger } from "../../src/graph/attestation-ledger.js";
import { NOW, exampleGraph, reviewedAt } from "./example-graph.js";

const graph = exampleGraph();
const HOUR = 60 * 60 * 1000;
const at = (ms: number) => new Date(NOW.getTime() + ms);
const proposal: GraphProposal = {
  diff: "- old rule\n+ new rule",
  undo: "restore the old line",
  proposed_at: NOW.toISOString(),
};

function target(p: GraphProposal = proposal, confidence = 0.95): GraphCheckTarget {
  return { domain: "self_modification", action: "update_lessons_md", confidence, proposal: p };
}

function check(now: Date, extra: Partial<GraphContext> = {}, t: GraphCheckTarget = target()) {
  return checkConsentGraph(graph, t, { now, reviews: reviewedAt(graph, NOW), ...extra });
}

describe("the cooling period counts from when ACP first saw the proposal", () => {
  it("a back-dated proposed_at does not skip the cooling period", () => {
    // proposed "three hours ago", seen now for the first time: before, the cooling period was over
    const backdated = { ...proposal, proposed_at: at(-3 * HOUR).toISOString() };
    const outcome = check(NOW, { proposals: createMemoryProposalLedger() }, target(backdated));
    expect(outcome).toMatchObject({ outcome: "FORCED", deferred_until: at(2 * HOUR).toISOString() });
    expect(outcome.reasons.map((r) => r.code)).toEqual(["cooling_period", "proposed_at_mismatch"]);
    expect(outcome.reasons[1]?.message).toContain(`ACP first saw it at ${NOW.toISOString()}`);
    // without a ledger, ACP has seen the proposal only now: the same
    expect(check(NOW, {}, target(backdated)).deferred_until).toBe(at(2 * HOUR).toISOString());
  });

  it("a proposal seen earlier becomes eligible exactly cooling_period_hours after ACP first saw it", () => {
    const proposals = createMemoryProposalLedger();
    const first = check(NOW, { proposals });
    expect(first).toMatchObject({ outcome: "FORCED", deferred_until: at(2 * HOUR).toISOString() });
    expect(first.reasons[0]?.code).toBe("cooling_period");
    expect(check(at(2 * HOUR - 1), { proposals }).deferred_until).toBe(at(2 * HOUR).toISOString());
    const later = check(at(2 * HOUR), { proposals });
    expect(later.outcome).toBe("VISIBLE");
    expect(later.reasons.map((r) => r.code)).toContain("cooling_period_elapsed");
  });

  it("without a ledger a proposal is never past its cooling period (ACP cannot vouch for when it was made)", () => {
    const outcome = check(at(2 * HOUR), {}, target({ ...proposal, proposed_at: at(2 * HOUR).toISOString() }));
    expect(outcome).toMatchObject({ outcome: "FORCED", deferred_until: at(4 * HOUR).toISOString() });
  });

  it("a back-dated proposal sent again counts from ACP's first sight, whatever time it carries", () => {
    const proposals = createMemoryProposalLedger();
    const backdated = { ...proposal, proposed_at: at(-3 * HOUR).toISOString() };
    expect(check(NOW, { proposals }, target(backdated)).outcome).toBe("FORCED");
    expect(check(at(2 * HOUR - 1), { proposals }, target(backdated)).deferred_until).toBe(at(2 * HOUR).toISOString());
    expect(check(at(2 * HOUR), { proposals }, target(backdated)).outcome).toBe("VISIBLE");
    expect(check(at(2 * HOUR), { proposals }).outcome).toBe("VISIBLE");
  });

  it("two ledgers that first saw it at different times (two nodes, a restart) both let it pass once the later is old enough", () => {
    const a = createMemoryProposalLedger();
    const b = createMemoryProposalLedger();
    check(NOW, { proposals: a });
    expect(check(at(2 * HOUR), { proposals: a }).outcome).toBe("VISIBLE");
    expect(check(at(2 * HOUR), { proposals: b }).deferred_until).toBe(at(4 * HOUR).toISOString());
    expect(check(at(4 * HOUR), { proposals: a }).outcome).toBe("VISIBLE");
    expect(check(at(4 * HOUR), { proposals: b }).outcome).toBe("VISIBLE");
  });

  it("the later of proposed_at and the first sight counts; beyond the clock skew a note says so", () => {
    const proposals = createMemoryProposalLedger();
    const ahead = { ...proposal, proposed_at: at(4 * 60 * 1000).toISOString() };
    const outcome = check(NOW, { proposals }, target(ahead));
    expect(outcome).toMatchObject({ outcome: "FORCED", deferred_until: at(2 * HOUR + 4 * 60 * 1000).toISOString() });
    const behind = check(
      NOW,
      { proposals: createMemoryProposalLedger() },
      target({ ...proposal, proposed_at: at(-299_000).toISOString() }),
    );
    expect(behind.deferred_until).toBe(at(2 * HOUR).toISOString());
    expect(outcome.reasons.map((r) => r.code)).toEqual(["cooling_period"]);
    expect(behind.reasons.map((r) => r.code)).toEqual(["cooling_period"]);
    // beyond the skew a note names both times; a narrower skew narrows it
    const far = { ...proposal, proposed_at: at(6 * 60 * 1000).toISOString() };
    const farOutcome = check(NOW, { proposals: createMemoryProposalLedger() }, target(far));
    expect(farOutcome.deferred_until).toBe(at(2 * HOUR + 6 * 60 * 1000).toISOString());
    expect(farOutcome.reasons.map((r) => r.code)).toEqual(["cooling_period", "proposed_at_mismatch"]);
    expect(check(NOW, { clockSkewSeconds: 60 }, target(ahead)).reasons.map((r) => r.code)).toContain(
      "proposed_at_mismatch",
    );
  });

  it("a changed diff, undo or call is another proposal: its cooling period starts when it is first seen", () => {
    const proposals = createMemoryProposalLedger();
    check(NOW, { proposals });
    const later = at(2 * HOUR);
    const changed = target({ ...proposal, diff: "- old rule\n+ another rule" });
    expect(
      check(later, { proposals }, { ...changed, proposal: { ...changed.proposal, proposed_at: later.toISOString() } })
        .outcome,
    ).toBe("FORCED");
    const undo = { ...proposal, undo: "something else" };
    expect(check(later, { proposals }, target(undo)).deferred_until).toBe(at(4 * HOUR).toISOString());
    const call = { tool: "write_lessons", arguments: { text: "x" } };
    expect(check(later, { proposals }, { ...target(), call }).deferred_until).toBe(at(4 * HOUR).toISOString());
    // the confidence is not part of it
    expect(check(later, { proposals }, target(proposal, 0.1)).outcome).toBe("FORCED");
    expect(check(later, { proposals }, target(proposal, 0.1)).deferred_until).toBeUndefined();
  });

  it("a ledger that fails or answers no time refuses", () => {
    const throwing = {
      firstSeen: () => {
        throw new Error("disk full");
      },
    };
    expect(check(NOW, { proposals: throwing }).reasons[0]?.code).toBe("graph_error");
    const invalid = { firstSeen: () => new Date(Number.NaN) };
    expect(check(NOW, { proposals: invalid }).outcome).toBe("BLOCKED");
    const notALedger = { proposals: {} as never };
    expect(check(NOW, notALedger).reasons[0]?.code).toBe("invalid_input");
  });
});

describe("createMemoryProposalLedger", () => {
  it("keeps the first time a key was seen", () => {
    const ledger = createMemoryProposalLedger();
    expect(ledger.firstSeen("a", NOW).toISOString()).toBe(NOW.toISOString());
    expect(ledger.firstSeen("a", at(HOUR)).toISOString()).toBe(NOW.toISOString());
    expect(ledger.firstSeen("b", at(HOUR)).toISOString()).toBe(at(HOUR).toISOString());
  });

  it("holds at most maxEntries, forgetting the oldest first (a forgotten proposal starts again: stricter)", () => {
    const ledger = createMemoryProposalLedger({ maxEntries: 2 });
    ledger.firstSeen("a", NOW);
    ledger.firstSeen("b", at(1));
    ledger.firstSeen("c", at(2));
    expect(ledger.firstSeen("b", at(HOUR)).getTime()).toBe(at(1).getTime());
    expect(ledger.firstSeen("a", at(HOUR)).getTime()).toBe(at(HOUR).getTime());
  });
});

describe("the graph source keeps one ledger", () => {
  const request: ActionRequest = {
    tool: "precheck",
    arguments: {},
    graph: { ...target(), confidence: 1 },
  };

  it("a proposal the source saw is refused until eligible, then accepted; a source that never saw it starts again", async () => {
    const source = graphSource({ graph, context: { reviews: reviewedAt(graph, NOW) } });
    expect((await source.evaluate(request, NOW))?.route).toBe("refuse");
    expect((await source.evaluate(request, at(2 * HOUR)))?.route).toBe("accept");
    const fresh = graphSource({ graph, context: { reviews: reviewedAt(graph, NOW) } });
    expect((await fresh.evaluate(request, at(2 * HOUR)))?.reasons[0]?.code).toBe("cooling_period");
  });

  it("evaluateConsentGraph binds the call into the proposal it records", () => {
    const proposals = createMemoryProposalLedger();
    const context = { now: NOW, reviews: reviewedAt(graph, NOW), proposals };
    evaluateConsentGraph(graph, request, context);
    const other = { ...request, arguments: { text: "other" } };
    expect(evaluateConsentGraph(graph, other, { ...context, now: at(2 * HOUR) })?.route).toBe("refuse");
    expect(evaluateConsentGraph(graph, request, { ...context, now: at(2 * HOUR) })?.route).toBe("accept");
  });

  it("a ledger that answers asynchronously (a store) is waited for by the graph source", async () => {
    const kept = createMemoryProposalLedger();
    const sightings: unknown[] = [];
    const asyncLedger = {
      firstSeen: (key: string, now: Date, sighting?: unknown) => {
        sightings.push(sighting);
        return Promise.resolve(kept.firstSeen(key, now));
      },
    };
    const context = { reviews: reviewedAt(graph, NOW), proposals: asyncLedger };
    const source = graphSource({ graph, context });
    expect((await source.evaluate(request, NOW))?.reasons[0]?.code).toBe("cooling_period");
    // a second source on the same ledger (a restart) counts from the first sight
    const restarted = graphSource({ graph, context });
    expect((await restarted.evaluate(request, at(2 * HOUR - 1)))?.route).toBe("refuse");
    expect((await restarted.evaluate(request, at(2 * HOUR)))?.route).toBe("accept");
    expect(sightings[0]).toMatchObject({
      domain: "self_modification",
      action: "update_lessons_md",
      tool: request.tool,
    });
    // checkConsentGraph cannot wait: it refuses rather than guess
    const direct = check(NOW, { proposals: asyncLedger });
    expect(direct).toMatchObject({ outcome: "BLOCKED" });
    expect(direct.reasons[0]?.code).toBe("graph_error");
    // a ledger that fails is a refusal
    const failing = { firstSeen: () => Promise.reject(new Error("database gone")) };
    const refused = await graphSource({ graph, context: { ...context, proposals: failing } }).evaluate(request, NOW);
    expect(refused?.route).toBe("refuse");
    expect(refused?.reasons[0]?.code).toBe("graph_error");
  });

  it("judging twice for a ledger spends a trusted-channel attestation once", async () => {
    const proposed = { ...proposal, proposed_at: at(-3 * HOUR).toISOString() };
    const call = { tool: "propose", arguments: { text: "be concise" } };
    const base = { domain: "self_modification", action: "propose_behavioral_change" };
    const attestation = createTrustedChannelAttestation({
      ...base,
      proposal: proposed,
      call,
      keyId: "k",
      secret: "secret-key",
      timestamp: NOW,
    });
    const attested: ActionRequest = { ...call, graph: { ...base, confidence: 1, attestation, proposal: proposed } };
    for (const answer of ["sync", "async"] as const) {
      const kept = createMemoryProposalLedger();
      kept.firstSeen(proposalKey({ ...base, proposal: proposed, call }), at(-3 * HOUR));
      const proposals = {
        firstSeen: (key: string, now: Date) =>
          answer === "sync" ? kept.firstSeen(key, now) : Promise.resolve(kept.firstSeen(key, now)),
      };
      const context = {
        reviews: reviewedAt(graph, NOW),
        trustedChannelKeys: { k: "secret-key" },
        attestations: createMemoryAttestationLedger(),
        proposals,
      };
      const source = graphSource({ graph, context });
      const first = await source.evaluate(attested, NOW);
      expect([answer, first?.route, first?.reasons.map((r) => r.code)]).toEqual([
        answer,
        "accept",
        ["visible_notify", "trusted_channel_verified", "cooling_period_elapsed"],
      ]);
      // the same attestation again: replayed
      expect((await source.evaluate(attested, NOW))?.reasons[0]?.code).toBe("attestation_replayed");
    }
  });
});
