/**
 * `POST /v1/consent/{id}/complete` (on any node, after the waiting call was lost) words a person's
 * denial as the waiting call does — "`ops` via cli: not today" — and records it once. It said "denied by
 * `ops`: …", so an agent heard a different sentence depending on which node finished its request. An
 * answer given in the console names its person and the console ("`alice` via console: …").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openEmbeddedServer, type EmbeddedServer } from "@acp/server";
import { createPostgresPendingConsentStore, openPostgresStore } from "@acp/store";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { namedPipelines, testKeys, APPROVER_TOKEN, tokenFor } from "../harness.js";

const TOKEN = "complete-denied-token-0123456789";
const db = useTestDatabase();
const dirs: string[] = [];
const running: EmbeddedServer[] = [];
afterAll(async () => {
  for (const s of running) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Post = (path: string, body?: unknown) => Promise<Response>;

/** A person's denial, given over the API or in the console (a session of a link made `--as alice`). */
const ANSWERS: readonly {
  readonly via: string;
  readonly id: string;
  readonly answer: (node: EmbeddedServer, url: string, post: Post, id: string) => Promise<Response>;
  readonly reason: string;
  readonly approver: { readonly id: string; readonly channel: string };
}[] = [
  {
    via: "the API",
    id: "cr_00000000000000000000000000000abc",
    answer: (_node, _url, post, id) =>
      post(`/v1/consent/${id}/response`, { decision: "denied", reason: "not today", approver_id: "ops" }),
    reason: "`api:ops` via cli: not today",
    approver: { id: "api:ops", channel: "cli" },
  },
  {
    via: "the console",
    id: "cr_00000000000000000000000000000abd",
    answer: async (node, url, _post, id) => {
      const { id: cookie, session } = await node.stores.consoleAuth.createSession(Date.now(), 60_000, "alice");
      return fetch(`${url}/console/api/consent/${id}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          cookie: `acp_console=${cookie}`,
          "x-csrf-token": session.csrfToken,
        },
        body: JSON.stringify({ decision: "denied", reason: "not today" }),
      });
    },
    reason: "`alice` via console: not today",
    approver: { id: "console:alice", channel: "console" },
  },
];

describe("completing a denied request on another node", () => {
  it.each(ANSWERS)("tells the denial given in $via as the waiting call would, once", async (answer) => {
    const id = answer.id;
    const now = Date.now();
    const expires = new Date(now + 120_000).toISOString();
    // the request a killed node left behind
    const store = await openPostgresStore(db.url);
    await createPostgresPendingConsentStore(store).insert({
      id,
      nonce: `n_00000000-0000-4000-8000-${id.slice(-12)}`,
      sessionId: "s",
      server: "fs",
      tool: "write_file",
      request: {
        type: "consent_request",
        version: "0.2.0",
        id,
        timestamp: new Date(now).toISOString(),
        expires_at: expires,
        agent: { id: "agent-1", name: "agent-1", command: "" },
        action: {
          tool: "write_file",
          server: "fs",
          category: "write",
          risk_level: "medium",
          parameters: { path: "/srv/x" },
          description: "call `write_file` on `fs`",
        },
        policy: { rule_id: "policy:ask-writes", rule_name: "ask-writes", required_level: "medium" },
        nonce: `n_00000000-0000-4000-8000-${id.slice(-12)}`,
      },
      reasons: [],
      createdAtMs: now,
      expiresAtMs: now + 120_000,
    });
    await store.close();

    const home = mkdtempSync(join(tmpdir(), "acp-complete-"));
    dirs.push(home);
    const node = await openEmbeddedServer({
      statePath: join(home, "state.db"),
      auditPath: join(home, "audit.jsonl"),
      ...namedPipelines(),
      keys: testKeys(),
      clock: () => new Date(),
      loopbackOnly: true,
      token: TOKEN,
      approverToken: APPROVER_TOKEN,
      storageUrl: db.url,
    });
    running.push(node);
    const url = await node.server.listen({ port: 0, host: "127.0.0.1" });
    const post = (path: string, body?: unknown) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tokenFor(path, TOKEN)}`,
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    const answered = await answer.answer(node, url, post, id);
    expect(answered.status).toBe(200);
    const done = await post(`/v1/consent/${id}/complete`);
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({
      outcome: "denied",
      request_id: id,
      reason: answer.reason,
      consent_response: { approver: answer.approver },
    });
    expect((await post(`/v1/consent/${id}/complete`)).status).toBe(409);
  });
});
