/**
 * A checkpoint body's `timestamp` must be an ISO-8601 date-time, as every event's `timestamp` must: before,
 * any string was read (and printed by `acp audit verify` as the last checkpoint's time), signed or not.
 */
import { describe, expect, it } from "vitest";
import {
  buildAuditEvent,
  createCheckpointBody,
  createCheckpointInput,
  serializeAuditEvent,
  signCheckpoint,
  verifyAuditChain,
} from "../../src/audit/index.js";
import { sampleChain, testKeys } from "./chain-fixture.js";

const keys = testKeys();
const chain = sampleChain(5, 1000, keys.privateKey);

/** The five events, then a checkpoint over them whose body holds `timestamp`, signed with the key. */
function withCheckpointAt(timestamp: string): string[] {
  const events = [...chain.events.slice(0, 5)];
  const body = createCheckpointBody(events.at(-1)?.event_hash ?? null, 5, timestamp);
  events.push(
    buildAuditEvent(createCheckpointInput({ body, signature: signCheckpoint(body, keys.privateKey) }), {
      id: "ae_cp",
      timestamp: "2026-01-15T12:00:01.000Z",
      previousEventHash: body.head_hash,
    }),
  );
  return events.map(serializeAuditEvent);
}

describe("a checkpoint's timestamp", () => {
  it("in ISO-8601 verifies, with the key and without", () => {
    for (const at of ["2026-01-15T12:00:01.000Z", "2026-01-15T13:00:01+01:00"]) {
      expect(verifyAuditChain(withCheckpointAt(at), { publicKey: keys.publicKey })).toMatchObject({ ok: true });
      expect(verifyAuditChain(withCheckpointAt(at)).ok).toBe(true);
    }
  });

  it("in any other form is schema_invalid at the checkpoint's line, even well signed", () => {
    for (const at of ["yesterday", "2026-01-15", "2026-01-15T12:00:01.000Z\u001b[2J", ""]) {
      for (const options of [{ publicKey: keys.publicKey }, {}]) {
        const result = verifyAuditChain(withCheckpointAt(at), options);
        expect(result.problem).toMatchObject({ line: 6, code: "schema_invalid" });
        expect(result.problem?.message).toContain("`metadata.checkpoint.timestamp` is not an ISO-8601 date-time");
      }
    }
  });
});
