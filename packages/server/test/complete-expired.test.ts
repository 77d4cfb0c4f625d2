/**
 * `POST /v1/consent/{id}/complete` on a request whose waiting call is gone, and nobody answers before it
 * expires: the completion settles it `expired` itself. Before, it recorded nothing then — the chain held
 * the request's `consent_requested` and no end, and the expiry sweep (which only looks at rows still
 * pending) never concluded it either. Now the completion that settles the request records its
 * `consent_expired`, once: a completion that finds it already concluded (by the sweep, the waiting call
 * or another completion) records nothing more.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createConsentProofs, openSqliteStores, type ServerStores } from "@acp/server";
import { completeConsent } from "../src/service/consent-completion.js";
import { testKeys } from "./harness.js";

const dirs: string[] = [];
const opened: ServerStores[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const NOW = Date.parse("2026-03-02T10:00:00Z");
const clock = (): Date => new Date(NOW);

async function stores(): Promise<ServerStores> {
  const home = mkdtempSync(join(tmpdir(), "acp-complete-expired-"));
  dirs.push(home);
  const s = await openSqliteStores({
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"),
    clock,
    answerPollMs: 60_000, // nobody answers: only the expiry ends the wait
  });
  opened.push(s);
  return s;
}

/** A request a killed node left pending; it expires `expiresInMs` from now (0: now). */
async function leftBehind(s: ServerStores, id: string, expiresInMs: number): Promise<void> {
  await s.pending.insert({
    id,
    nonce: `n_${id}`,
    sessionId: "s",
    server: "fs",
    tool: "write_file",
    request: {
      type: "consent_request",
      id,
      timestamp: new Date(NOW - 60_000).toISOString(),
      expires_at: new Date(NOW + expiresInMs).toISOString(),
      nonce: `n_${id}`,
      agent: { id: "agent-7" },
      action: { server: "fs", tool: "write_file", category: "write", risk_level: "medium", parameters: {} },
      policy: { rule_id: "ask-writes" },
    },
    reasons: [],
    createdAtMs: NOW - 60_000,
    expiresAtMs: NOW + expiresInMs,
  });
}

function completion(s: ServerStores, recorded: { type: string; fields: Record<string, unknown> }[]) {
  return {
    stores: s,
    ...createConsentProofs(testKeys(), s.nonces),
    audit: { record: (type: string, fields: Record<string, unknown>) => void recorded.push({ type, fields }) },
    clock,
  };
}

describe("completing a request nobody answers in time", () => {
  it("records the consent_expired of the request it concludes, once", async () => {
    const s = await stores();
    const id = "cr_00000000000000000000000000000e01";
    await leftBehind(s, id, 0);
    const recorded: { type: string; fields: Record<string, unknown> }[] = [];
    const deps = completion(s, recorded);

    expect(await completeConsent(deps, id, new AbortController().signal)).toEqual({
      outcome: "expired",
      request_id: id,
    });
    expect((await s.pending.get(id))?.status).toBe("expired");
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      type: "consent_expired",
      fields: {
        request_id: id,
        agent: "agent-7",
        tool: "write_file",
        decision: "expired",
        metadata: { completed_after_restart: true },
      },
    });

    // a second completion finds it concluded: it says so and records nothing more
    expect(await completeConsent(deps, id, new AbortController().signal)).toEqual({
      outcome: "expired",
      request_id: id,
    });
    expect(recorded).toHaveLength(1);
  });

  it("records nothing when another node concluded the request first", async () => {
    const s = await stores();
    const id = "cr_00000000000000000000000000000e02";
    await leftBehind(s, id, 0);
    expect(await s.pending.settle(id, "expired", NOW)).toBe(true); // the sweep of another node won
    const recorded: { type: string; fields: Record<string, unknown> }[] = [];
    expect(await completeConsent(completion(s, recorded), id, new AbortController().signal)).toEqual({
      outcome: "expired",
      request_id: id,
    });
    expect(recorded).toEqual([]);
  });

  it("says expired, not 'already completed', when the approval given in time ended before the completion; once", async () => {
    const s = await stores();
    const id = "cr_00000000000000000000000000000e03";
    await leftBehind(s, id, -1_000); // the node that asked was killed; the request expired a second ago
    const answer = { decision: "approved", approver: "api:ops", nonce: `n_${id}` };
    expect(await s.pending.decide(id, "approved", answer, NOW - 2_000)).toMatchObject({ ok: true }); // in time
    const recorded: { type: string; fields: Record<string, unknown> }[] = [];
    const deps = completion(s, recorded);

    const completed = await completeConsent(deps, id, new AbortController().signal);
    expect(completed).toMatchObject({ outcome: "expired", request_id: id });
    expect(completed.reason).toMatch(
      /^approved by `api:ops`, but the approval ended at .* before the request was completed$/,
    );
    expect(completed.consent_response).toBeUndefined();
    expect(recorded).toEqual([
      {
        type: "consent_expired",
        fields: expect.objectContaining({
          request_id: id,
          decision: "expired",
          metadata: { answered: "approved", completed_after_restart: true },
        }) as unknown,
      },
    ]);
    // its nonce is now spent: a second completion (on any node) is told so, and records nothing
    await expect(completeConsent(deps, id, new AbortController().signal)).rejects.toMatchObject({
      status: 409,
      code: "consent_already_completed",
    });
    expect(recorded).toHaveLength(1);
  });

  it("records a denial given in time as consent_denied when it is completed after the request ended", async () => {
    const s = await stores();
    const id = "cr_00000000000000000000000000000e04";
    await leftBehind(s, id, -1_000);
    const answer = { decision: "denied", approver: "cli:alice", nonce: `n_${id}`, reason: "not today" };
    expect(await s.pending.decide(id, "denied", answer, NOW - 2_000)).toMatchObject({ ok: true });
    const recorded: { type: string; fields: Record<string, unknown> }[] = [];
    expect(await completeConsent(completion(s, recorded), id, new AbortController().signal)).toEqual({
      outcome: "denied",
      request_id: id,
      reason: "`alice` via cli: not today",
    });
    expect(recorded.map((r) => r.type)).toEqual(["consent_denied"]);
    expect(recorded[0]?.fields).toMatchObject({ metadata: { reason: "`alice` via cli: not today" } });
  });
});
