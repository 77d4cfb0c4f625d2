/**
 * `acp serve` completes a request whose waiting call is gone (`POST /v1/consent/{id}/complete`) with the
 * verifier `acp proxy` uses (core's `verifyConsentProof`, the response bound to its request's id, nonce and
 * expiry), and timestamps the signed response when the person answered, not when it was completed.
 *
 * Before: a session approval given in time but completed after its request expired was timestamped at the
 * completion, so `acp proof verify` of the request and the response said `expired`; and an answer recorded
 * after its request expired (a row written around the table's check) was signed, verified and recorded as
 * `consent_approved`, since serve's verifier never compared the answer's time with the request's expiry.
 * The clock of `acp serve` is injected (`ctx.io.now`): no test waits for time to pass.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import type { ConsentRequestV02 } from "@acp/proxy";
import { registerServe, type ServeReady } from "../src/commands/serve.js";
import type { CliContext } from "../src/context.js";
import { runCli } from "./run.js";

const homes: string[] = [];
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

const T = Date.now();
const AGENTS = "agents-token-0123456789abcdef0123";
const APPROVERS = "approvers-token-0123456789abcdef01";
const agents = { authorization: `Bearer ${AGENTS}` };
const env = (home: string): Record<string, string> => ({ HOME: "/nonexistent-home", ACP_HOME: home, USER: "alice" });

/** `acp init`, then `acp serve --port 0` in-process on the clock `now()`; stopped and removed after the test. */
async function serveAt(now: () => Date): Promise<{ home: string; ready: ServeReady }> {
  const home = mkdtempSync(join(tmpdir(), "acp-serve-answer-time-"));
  homes.push(home);
  expect((await runCli(["init", "--no-passphrase"], { env: env(home), now: new Date(T) })).code).toBe(0);
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let onReady!: (ready: ServeReady) => void;
  const ready = new Promise<ServeReady>((resolve) => (onReady = resolve));
  const ctx: CliContext = {
    io: {
      stdout: { write: () => true },
      stderr: { write: () => true },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      env: { ...env(home), ACP_BRIDGE_TOKEN: AGENTS, ACP_APPROVER_TOKEN: APPROVERS },
      cwd: home,
      now,
    },
    exitCode: 0,
  };
  const program = new Command("acp").exitOverride();
  registerServe(program, ctx, { onReady, stopped: () => stopped });
  const done = program.parseAsync(["node", "acp", "serve", "--port", "0"]);
  stops.push(async () => {
    stop();
    await done;
  });
  return { home, ready: await ready };
}

/**
 * A request a killed node left pending: it expires 60 s after T. `tableExpiresAtMs`: the expiry the table's
 * row holds (the one the table checks an answer against); by default the request's own.
 */
async function leftBehind(ready: ServeReady, tableExpiresAtMs?: number): Promise<ConsentRequestV02> {
  const id = `cr_${randomUUID().replaceAll("-", "")}`;
  const request: ConsentRequestV02 = {
    type: "consent_request",
    version: "0.2.0",
    id,
    timestamp: new Date(T).toISOString(),
    expires_at: new Date(T + 60_000).toISOString(),
    agent: { id: "agent-1", name: "agent-1", command: "node agent.js" },
    action: {
      tool: "write_file",
      server: "fs",
      category: "write",
      risk_level: "medium",
      parameters: { path: "/tmp/answer-time.txt" },
      description: "call `write_file` on `fs`",
    },
    policy: { rule_id: "policy:ask-writes", rule_name: "ask-writes", required_level: "medium" },
    nonce: `n_${randomUUID()}`,
  };
  await ready.embedded.stores.pending.insert({
    id,
    nonce: request.nonce,
    sessionId: "s1",
    server: "fs",
    tool: "write_file",
    request,
    reasons: [],
    createdAtMs: T,
    expiresAtMs: tableExpiresAtMs ?? T + 60_000,
  });
  return request;
}

async function complete(ready: ServeReady, id: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${ready.url}/v1/consent/${id}/complete`, { method: "POST", headers: agents });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function eventsOf(
  ready: ServeReady,
  id: string,
): Promise<{ event_type: string; metadata: Record<string, unknown> }[]> {
  await ready.embedded.stores.auditLog.flush();
  // the audit trail is the approvers' to read (the agents' token is 403 there)
  const res = await fetch(`${ready.url}/v1/audit?request_id=${id}`, {
    headers: { authorization: `Bearer ${APPROVERS}` },
  });
  const { events } = (await res.json()) as {
    events: { event: { event_type: string; metadata: Record<string, unknown> } }[];
  };
  return events.map((e) => e.event);
}

describe("acp serve completes a request with the answer's time, verified as acp proxy verifies it", () => {
  it("a session approval given in time, completed after its request expired, is timestamped when given: acp proof verify and acp audit verify accept it", async () => {
    let nowMs = T;
    const { home, ready } = await serveAt(() => new Date(nowMs));
    const request = await leftBehind(ready);
    // the person answers in time, from the command line, against the home acp serve keeps its state in
    const answeredAt = T + 10_000;
    const approve = await runCli(["approve", request.id, "--for-session"], {
      env: env(home),
      now: new Date(answeredAt),
    });
    expect(approve.code).toBe(0);

    nowMs = T + 120_000; // the request expired 60 s ago; the node that asked is gone
    const completed = await complete(ready, request.id);
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({ outcome: "approved", request_id: request.id });
    const response = completed.body["consent_response"] as { timestamp: string; conditions: Record<string, unknown> };
    expect(response.timestamp).toBe(new Date(answeredAt).toISOString());
    expect(response.conditions).toMatchObject({
      scope: "session",
      single_use: false,
      valid_until: new Date(answeredAt + 12 * 3_600_000).toISOString(),
    });

    // the proof checked against its request, later, with the home's public key
    const bundle = join(home, "approval.json");
    writeFileSync(bundle, JSON.stringify({ request, response }));
    const verified = await runCli(["proof", "verify", bundle, "--json"], { env: env(home), now: new Date(nowMs) });
    expect(JSON.parse(verified.stdout)).toMatchObject({ valid: true, decision: "approved", request_id: request.id });
    expect(verified.code).toBe(0);

    const events = await eventsOf(ready, request.id);
    const approved = events.find((e) => e.event_type === "consent_approved");
    expect(approved?.metadata["consent_response"]).toEqual(response);
    const audit = await runCli(["audit", "verify"], { env: env(home), now: new Date(nowMs) });
    expect(audit.code).toBe(0);
  });

  it("an answer recorded after its request expired is refused: nothing is signed or recorded as approved, once", async () => {
    let nowMs = T;
    const { home, ready } = await serveAt(() => new Date(nowMs));
    // the table's row says the request runs 10 minutes, the request itself 60 s: the table takes an answer
    // its request no longer accepts (a row written around the table's own check)
    const request = await leftBehind(ready, T + 600_000);
    nowMs = T + 90_000;
    const answered = await fetch(`${ready.url}/v1/consent/${request.id}/response`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${APPROVERS}` },
      body: JSON.stringify({ decision: "approved", scope: "session" }),
    });
    expect(answered.status).toBe(200);

    const completed = await complete(ready, request.id);
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({ outcome: "expired", request_id: request.id });
    expect(completed.body["reason"]).toBe(
      `the answer was recorded at ${new Date(nowMs).toISOString()}, after the request expired at ${request.expires_at}: not used`,
    );
    expect(completed.body["consent_response"]).toBeUndefined();
    const events = await eventsOf(ready, request.id);
    expect(events.map((e) => e.event_type)).toEqual(["consent_expired"]);
    expect(events[0]?.metadata).toMatchObject({ answer_refused: "recorded after the request expired" });

    // its nonce is spent: a second completion (on any node) is told so and records nothing
    expect((await complete(ready, request.id)).status).toBe(409);
    expect(await eventsOf(ready, request.id)).toHaveLength(1);
    const audit = await runCli(["audit", "verify"], { env: env(home), now: new Date(nowMs) });
    expect(audit.code).toBe(0);
  });
});
