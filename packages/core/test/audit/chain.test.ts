import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { canonicalJson, sha256Ref } from "../../src/canonical-json/index.js";
import {
  buildAuditEvent,
  computeEventHash,
  createAuditEventBody,
  parseAuditLine,
  sealAuditEvent,
  sealAuditLine,
  serializeAuditEvent,
  verifyAuditChain,
  AUDIT_EVENT_TYPES,
  type AuditMetadata,
} from "../../src/audit/index.js";
import { ChainBuilder, sampleChain, testKeys } from "./chain-fixture.js";

describe("audit event hashing", () => {
  it("hashes the canonical JSON of the event without event_hash (the documented worked example)", () => {
    const event = buildAuditEvent(
      { event_type: "policy_evaluated", request_id: "cr_1", tool: "send_email", decision: "ask", metadata: {} },
      { id: "ae_1", timestamp: "2026-01-15T12:00:00.000Z", previousEventHash: null },
    );
    const { event_hash, ...body } = event;
    expect(event_hash).toBe(sha256Ref(canonicalJson(body)));
    expect(canonicalJson(body)).toBe(
      '{"agent":null,"category":null,"decision":"ask","event_type":"policy_evaluated","id":"ae_1",' +
        '"metadata":{},"policy_rule":null,"previous_event_hash":null,"request_id":"cr_1","response_time_ms":null,' +
        '"risk_level":null,"timestamp":"2026-01-15T12:00:00.000Z","tool":"send_email","type":"audit_event",' +
        '"version":"0.2.0"}',
    );
    // the same bytes through `sha256sum` (docs/reference/audit.md)
    expect(event_hash).toBe("sha256:d5ef369f97a39199817b962f437b61a983dd935cf5482b507bf6b9e9342b92d0");
    expect(computeEventHash(event)).toBe(event_hash);
  });

  it("writes every field of §7.4, null where it does not apply", () => {
    const event = buildAuditEvent(
      { event_type: "checkpoint" },
      { id: "ae_x", timestamp: "2026-01-15T12:00:00Z", previousEventHash: null },
    );
    expect(Object.keys(event).sort()).toEqual(
      [
        "type",
        "version",
        "id",
        "timestamp",
        "event_type",
        "request_id",
        "agent",
        "tool",
        "category",
        "risk_level",
        "decision",
        "response_time_ms",
        "policy_rule",
        "metadata",
        "previous_event_hash",
        "event_hash",
      ].sort(),
    );
    expect(parseAuditLine(serializeAuditEvent(event)).ok).toBe(true);
  });

  it("the spliced one-pass line equals the canonical JSON of the sealed event for any metadata", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 3 }),
        fc.string(),
        fc.constantFrom(...AUDIT_EVENT_TYPES),
        (meta, agent, type) => {
          const metadata = { value: meta } as AuditMetadata;
          const body = createAuditEventBody(
            { event_type: type, agent, metadata },
            { id: "ae_p", timestamp: "2026-01-15T12:00:00Z", previousEventHash: null },
          );
          const sealed = sealAuditLine(body);
          expect(sealed.line).toBe(serializeAuditEvent(sealAuditEvent(body)));
          expect(sealed.event.event_hash).toBe(computeEventHash(body));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("verifyAuditChain", () => {
  it("verifies an intact chain with signed checkpoints", () => {
    const keys = testKeys();
    const chain = sampleChain(25, 10, keys.privateKey);
    const result = verifyAuditChain(chain.lines(), { publicKey: keys.publicHex });
    expect(result.problem).toBeNull();
    expect(result.ok).toBe(true);
    expect(result.count).toBe(28);
    expect(result.checkpoints).toBe(3);
    expect(result.head).toBe(chain.head());
    expect(result.lastCheckpoint).toMatchObject({ line: 28, count: 27 });
    expect(result.eventsAfterLastCheckpoint).toBe(0);
    expect(result.signaturesChecked).toBe(true);
  });

  it("verifies an empty log", () => {
    const result = verifyAuditChain([]);
    expect(result).toMatchObject({ ok: true, count: 0, head: null, checkpoints: 0 });
  });

  it("reports events not yet covered by a checkpoint", () => {
    const chain = new ChainBuilder();
    chain.append({ event_type: "tool_call_intercepted" });
    chain.append({ event_type: "policy_evaluated" });
    const result = verifyAuditChain(chain.lines());
    expect(result).toMatchObject({ ok: true, count: 2, eventsAfterLastCheckpoint: 2, signaturesChecked: false });
  });
});
