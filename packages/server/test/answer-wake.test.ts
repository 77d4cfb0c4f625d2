/**
 * `/v1/decide?wait=true` on SQLite: an answer recorded by this service (the API, the console) wakes the
 * waiting call at once. The poll interval is set to days here, so the call can only complete by that
 * wake-up — before, it read its row on a timer and these calls would wait for the next poll.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openEmbeddedServer, SESSION_TTL_MS, type EmbeddedServer } from "@acp/server";
import { eventually, pipelineFor, testKeys } from "./harness.js";

const TOKEN = "answer-wake-token-0123456789";
const DAYS = 1_000_000_000; // ~11.5 days: a poll that never comes within the test
let home: string;
let node: EmbeddedServer;
let url: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-answer-wake-"));
  node = await openEmbeddedServer({
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"),
    pipeline: pipelineFor(),
    simulationPipeline: pipelineFor(),
    keys: testKeys(),
    clock: () => new Date(),
    loopbackOnly: true,
    token: TOKEN,
    answerPollMs: DAYS,
    changePollMs: 50,
  });
  url = await node.server.listen({ port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

async function waitingCall(path: string): Promise<{ id: string; answer: Promise<unknown> }> {
  const answer = fetch(`${url}/v1/decide?wait=true`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ tool: "write_file", arguments: { path } }),
  }).then((res): Promise<unknown> => res.json());
  const row = await eventually(async () =>
    (await node.stores.pending.listPending(Date.now())).find(
      (r) =>
        JSON.stringify((r.request as { action: { parameters: unknown } }).action.parameters) ===
        JSON.stringify({ path }),
    ),
  );
  return { id: row.id, answer };
}

describe("a waiting call on SQLite wakes when this service records the answer", () => {
  it("through the API", async () => {
    const { id, answer } = await waitingCall("/tmp/api");
    const res = await fetch(`${url}/v1/consent/${id}/response`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ decision: "denied", reason: "not now" }),
    });
    expect(res.status).toBe(200);
    expect(await answer).toMatchObject({ route: "refuse", consent: { outcome: "denied", request_id: id } });
  });

  it("through the console", async () => {
    const { id, session } = await node.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
    const call = await waitingCall("/tmp/console");
    const res = await fetch(`${url}/console/api/consent/${call.id}`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: `acp_console=${id}`, "x-csrf-token": session.csrfToken },
      body: JSON.stringify({ decision: "approved" }),
    });
    expect(res.status).toBe(200);
    expect(await call.answer).toMatchObject({ route: "accept", consent: { outcome: "approved", request_id: call.id } });
  });
});
