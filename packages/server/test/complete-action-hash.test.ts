/**
 * A consent request completed with `POST /v1/consent/{id}/complete` records `consent_action_hash` beside
 * `consent_action`, as the proxy's gate and the broker do: when a value of the action is cut to fit the
 * audit line, `acp audit verify` (the core verifier) still checks the response's signature against it, so a
 * log rewriter who flips the recorded response's decision or scope and re-hashes the chain is caught.
 * Before, the completion recorded the action alone: such a response was only "omitted", nothing checked.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { actionHash, sealAuditLine, verifyAuditChain, type AuditEventV02 } from "@acp/core";
import { verifyAuditFile } from "@acp/store";
import { createConsentProofs, openSqliteStores, type ServerStores } from "@acp/server";
import { completeConsent } from "../src/service/consent-completion.js";
import { createAuditSink } from "../src/service/audit-recorder.js";
import { testKeys } from "./harness.js";

const dirs: string[] = [];
const opened: ServerStores[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const NOW = Date.parse("2026-03-02T10:00:00Z");
const clock = (): Date => new Date(NOW);

/** An argument longer than an audit line holds (1 MiB): cut to its length and SHA-256 in the event. */
const LONG = "y".repeat(1_100_000);

async function open(): Promise<{ s: ServerStores; auditPath: string }> {
  const home = mkdtempSync(join(tmpdir(), "acp-complete-hash-"));
  dirs.push(home);
  const auditPath = join(home, "audit.jsonl");
  const s = await openSqliteStores({ statePath: join(home, "state.db"), auditPath, clock, answerPollMs: 20 });
  opened.push(s);
  return { s, auditPath };
}

/** A request a killed node left behind, answered `decision` in time by a person. */
async function answeredLeftBehind(s: ServerStores, id: string, decision: "approved" | "denied"): Promise<void> {
  const parameters = { path: "/tmp/long", content: LONG };
  const nonce = `n_${randomUUID()}`;
  await s.pending.insert({
    id,
    nonce,
    sessionId: "s",
    server: "fs",
    tool: "write_file",
    request: {
      type: "consent_request",
      id,
      timestamp: new Date(NOW - 60_000).toISOString(),
      expires_at: new Date(NOW + 60_000).toISOString(),
      nonce,
      agent: { id: "agent-7" },
      action: { server: "fs", tool: "write_file", category: "write", risk_level: "medium", parameters },
      policy: { rule_id: "ask-writes" },
    },
    reasons: [],
    createdAtMs: NOW - 60_000,
    expiresAtMs: NOW + 60_000,
  });
  const answer = { decision, approver: "api:ops", nonce };
  expect(await s.pending.decide(id, decision, answer, NOW - 1_000)).toMatchObject({ ok: true });
}

function events(path: string): AuditEventV02[] {
  return readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as AuditEventV02);
}

/** The events (checkpoints left out) chained and hashed again, as one who rewrites a log without the key would. */
function rechain(list: readonly AuditEventV02[]): string[] {
  let previous: string | null = null;
  return list
    .filter((e) => e.event_type !== "checkpoint")
    .map((event) => {
      const { event_hash: _hash, ...body } = event;
      void _hash;
      const sealed = sealAuditLine({ ...body, previous_event_hash: previous });
      previous = sealed.event.event_hash;
      return sealed.line;
    });
}

describe("a completion whose action was cut to fit the audit line", () => {
  for (const decision of ["approved", "denied"] as const) {
    it(`records the action's hash (consent_${decision}): the signature is checked, an edited response is caught`, async () => {
      const keys = testKeys();
      const { s, auditPath } = await open();
      const id =
        decision === "approved" ? "cr_0000000000000000000000000000a501" : "cr_0000000000000000000000000000a502";
      await answeredLeftBehind(s, id, decision);
      const deps = { stores: s, ...createConsentProofs(keys, s.nonces), audit: createAuditSink(s.auditLog), clock };
      expect(await completeConsent(deps, id, new AbortController().signal)).toMatchObject({ outcome: decision });
      await s.auditLog.flush();

      const all = events(auditPath);
      const index = all.findIndex((e) => e.event_type === `consent_${decision}`);
      const event = all[index] as AuditEventV02;
      const metadata = event.metadata as Record<string, unknown>;
      // the action was cut (not the whole 1.1 MB argument) and its hash is the signed action_hash
      expect(JSON.stringify(metadata["consent_action"]).length).toBeLessThan(LONG.length);
      const whole = { server: "fs", tool: "write_file", parameters: { path: "/tmp/long", content: LONG } };
      expect(metadata["consent_action_hash"]).toBe(actionHash(whole));

      const { verification } = await verifyAuditFile(auditPath, { publicKey: keys.publicKeyHex });
      expect(verification.problem).toBeNull();
      expect(verification.consentResponses).toEqual({
        checked: 0,
        unchecked: 1,
        notCheckable: [{ line: index + 1, why: "omitted", signatureChecked: true }],
      });

      // a rewriter flips the recorded response and re-hashes the chain: the signature no longer verifies
      const response = metadata["consent_response"] as { decision: string; conditions: Record<string, unknown> };
      const edited = JSON.parse(
        JSON.stringify({
          ...event,
          metadata: {
            ...metadata,
            consent_response: {
              ...response,
              ...(decision === "approved"
                ? { conditions: { ...response.conditions, valid_until: "2099-01-01T00:00:00.000Z" } }
                : { decision: "approved" }),
            },
          },
        }),
      ) as AuditEventV02;
      const lines = rechain(all.map((e, i) => (i === index ? edited : e)));
      const tampered = verifyAuditChain(lines, { publicKey: keys.publicKeyHex });
      expect(tampered.problem).toMatchObject({ code: "consent_signature_invalid", line: index + 1 });
    });
  }
});
