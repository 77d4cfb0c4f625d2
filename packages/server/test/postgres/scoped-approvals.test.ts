/**
 * Approvals wider than one call, across the nodes of one PostgreSQL database: a `session` approval given
 * for a call waiting on node A covers the same call of that session on node B (not another session); a
 * time window covers the same call on B in any session; a grant row whose signature does not verify
 * approves nothing. On SQLite a window outlives a restart of the service.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openEmbeddedServer, type EmbeddedServer, type ServiceKeyPair } from "@acp/server";
import { createTestDatabase, type TestDatabase } from "../../../store/test/postgres/test-database.js";
import { at, eventually, namedPipelines, readJson, testKeys, type Json, APPROVER_TOKEN, tokenFor } from "../harness.js";

const TOKEN = "scoped-approvals-token-0123456789";
const dbs: TestDatabase[] = [];
const dirs: string[] = [];
const running: EmbeddedServer[] = [];

afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
});
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const db of dbs) await db.drop();
});

/** Each test its own database: a chain is signed with one key (a node with another refuses to join). */
async function freshDatabase(): Promise<{ url: string }> {
  const db = await createTestDatabase();
  dbs.push(db);
  return db;
}

interface Node {
  readonly url: string;
  readonly embedded: EmbeddedServer;
}

async function startNode(keys: ServiceKeyPair, options: { storageUrl?: string; home?: string } = {}): Promise<Node> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "acp-scoped-"));
  dirs.push(home);
  const embedded = await openEmbeddedServer({
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"),
    ...namedPipelines(),
    keys,
    clock: () => new Date(),
    loopbackOnly: true,
    token: TOKEN,
    approverToken: APPROVER_TOKEN,
    answerPollMs: 20,
    changePollMs: 50,
    ...(options.storageUrl !== undefined ? { storageUrl: options.storageUrl } : {}),
  });
  running.push(embedded);
  return { url: await embedded.server.listen({ port: 0, host: "127.0.0.1" }), embedded };
}

async function call(node: Node, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${tokenFor(path, TOKEN)}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await readJson(res) };
}

const WRITE = {
  tool: "write_file",
  server: "fs",
  agent: "agent-1",
  arguments: { path: "/srv/report.txt", text: "hi" },
};

/** Starts a waiting call on `node`, answers it with `scope` through `answerer`, and returns the agent's answer. */
async function approveWith(node: Node, answerer: Node, session: string, scope: unknown): Promise<Json> {
  const waiting = call(node, "POST", `/v1/decide?wait=true&session=${session}`, WRITE);
  const id = await eventually(async () => {
    const list = await call(answerer, "GET", "/v1/consent?status=pending");
    return at(list.json, "requests", 0, "id") as string | undefined;
  });
  const answered = await call(answerer, "POST", `/v1/consent/${id}/response`, { decision: "approved", scope });
  expect(answered.status).toBe(200);
  const done = await waiting;
  expect(done.status).toBe(200);
  expect(done.json).toMatchObject({ route: "accept", consent: { outcome: "approved", request_id: id } });
  return done.json;
}

/** Whether `node` asks a person for the call (a pending request appears) or answers it at once. */
async function asks(node: Node, session: string): Promise<boolean> {
  const control = new AbortController();
  const answer = fetch(`${node.url}/v1/decide?wait=true&session=${session}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(WRITE),
    signal: control.signal,
  }).then(async (res) => ({ done: true as const, json: await readJson(res) }));
  const pending = eventually(async () => {
    const list = await call(node, "GET", "/v1/consent?status=pending");
    return at(list.json, "requests", 0, "id") !== undefined ? { done: false as const } : false;
  });
  const first = await Promise.race([answer.catch(() => ({ done: true as const, json: null })), pending]);
  if (!first.done) {
    control.abort(); // withdraws the request
    await answer.catch(() => undefined);
    await eventually(async () => {
      const list = await call(node, "GET", "/v1/consent?status=pending");
      return at(list.json, "requests", 0) === undefined;
    });
    return true;
  }
  expect(first.json).toMatchObject({
    route: "accept",
    consent: { outcome: "approved", arguments: WRITE.arguments },
  });
  return false;
}

describe("scoped approvals on PostgreSQL, across nodes", () => {
  it("a session approval given on node A covers that session's same call on node B, not another session", async () => {
    const keys = testKeys();
    const db = await freshDatabase();
    const a = await startNode(keys, { storageUrl: db.url });
    const b = await startNode(keys, { storageUrl: db.url });
    await approveWith(a, b, "s-one", "session");
    expect(await asks(b, "s-one")).toBe(false);
    expect(await asks(a, "s-one")).toBe(false);
    expect(await asks(b, "s-two")).toBe(true);
    // the reuse is in the one chain, on B
    const audit = await call(b, "GET", "/v1/audit?event_type=consent_approved&limit=10");
    expect(at(audit.json, "events", 0, "event", "metadata", "reused")).toBe(true);
  });

  it("a time window given on node A covers the same call on node B in any session, and a restarted node", async () => {
    const keys = testKeys();
    const db = await freshDatabase();
    const a = await startNode(keys, { storageUrl: db.url });
    const b = await startNode(keys, { storageUrl: db.url });
    await approveWith(a, a, "w-one", { for: "10m" });
    expect(await asks(b, "w-two")).toBe(false);
    const c = await startNode(keys, { storageUrl: db.url });
    expect(await asks(c, "w-three")).toBe(false);
  });

  it("a grant a node with another key wrote approves nothing", async () => {
    const db = await freshDatabase(); // no checkpoint yet: nodes with other keys may both start
    const a = await startNode(testKeys(), { storageUrl: db.url });
    const b = await startNode(testKeys(), { storageUrl: db.url });
    const WRITE_OTHER = { ...WRITE, arguments: { path: "/srv/other.txt", text: "x" } };
    const waiting = call(a, "POST", "/v1/decide?wait=true&session=k", WRITE_OTHER);
    const id = await eventually(async () =>
      at((await call(a, "GET", "/v1/consent?status=pending")).json, "requests", 0, "id"),
    );
    await call(a, "POST", `/v1/consent/${String(id)}/response`, { decision: "approved", scope: { for: "10m" } });
    expect((await waiting).json).toMatchObject({ route: "accept" });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const rows = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM consent_grants WHERE grant_json LIKE '%/srv/other.txt%'",
      );
      expect(rows.rows[0]?.n).toBe(1); // the window A's call was approved with is stored
    } finally {
      await client.end();
    }
    // B's key did not sign it: B asks
    const control = new AbortController();
    const asked = fetch(`${b.url}/v1/decide?wait=true&session=k`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(WRITE_OTHER),
      signal: control.signal,
    }).catch(() => undefined);
    await eventually(async () => {
      const list = await call(b, "GET", "/v1/consent?status=pending");
      return (list.json as { requests: { server: string }[] }).requests.length > 0;
    });
    control.abort();
    await asked;
  });
});

describe("scoped approvals on SQLite", () => {
  it("a time window outlives a restart of the service", async () => {
    const keys = testKeys();
    const home = mkdtempSync(join(tmpdir(), "acp-scoped-home-"));
    const first = await startNode(keys, { home });
    await approveWith(first, first, "r-one", { for: "10m" });
    await first.embedded.close();
    running.splice(running.indexOf(first.embedded), 1);
    const second = await startNode(keys, { home });
    expect(await asks(second, "r-two")).toBe(false);
  });
});
