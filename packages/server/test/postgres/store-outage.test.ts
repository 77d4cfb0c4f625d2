/**
 * The database goes away under a running node (PostgreSQL restarting, a failover): the node stays up,
 * `/readyz` says so, every decision refuses (none is answered that the chain cannot record), and once
 * the database answers again decisions resume on their own — before, a failed audit write stopped the
 * node's decisions until it was restarted. A call waiting for a person across the outage still
 * completes, and the chain verifies. The refusals are logged as one line, not a stack trace per request;
 * the outage as one "database unreachable" line and one "database reachable again after Ns".
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openEmbeddedServer, type EmbeddedServer } from "@acp/server";
import { postgresTestUrl, useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { at, eventually, namedPipelines, readJson, testKeys, type Json, APPROVER_TOKEN, tokenFor } from "../harness.js";

const TOKEN = "store-outage-token-0123456789";
const db = useTestDatabase();
const dirs: string[] = [];
const running: EmbeddedServer[] = [];

afterAll(async () => {
  await setConnections(true).catch(() => undefined);
  for (const s of running) await s.close().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dbName(): string {
  return new URL(db.url).pathname.slice(1);
}

/** Lets the node's database take connections, or ends every connection to it and refuses new ones. */
async function setConnections(allowed: boolean): Promise<void> {
  const admin = new pg.Client({ connectionString: postgresTestUrl() });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE ${dbName()} WITH ALLOW_CONNECTIONS ${allowed ? "true" : "false"}`);
    if (!allowed) {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [dbName()]);
    }
  } finally {
    await admin.end();
  }
}

async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json; retryAfter: string | null }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${tokenFor(path, TOKEN)}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await readJson(res), retryAfter: res.headers.get("retry-after") };
}

const READ = { tool: "read_file", server: "fs", arguments: { path: "/srv/a.txt" } };
const WRITE = { tool: "write_file", server: "fs", arguments: { path: "/srv/b.txt", text: "x" } };

describe("the database goes away under a running node", () => {
  it("refuses every decision while it is gone, resumes by itself when it is back, and a waiting call completes", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-outage-"));
    dirs.push(home);
    const logged: string[] = [];
    // the real clock: a frozen one would drift from the database's and the node refuse for that (clock-skew.test.ts)
    const node = await openEmbeddedServer({
      statePath: join(home, "state.db"),
      auditPath: join(home, "audit.jsonl"),
      ...namedPipelines(),
      keys: testKeys(),
      clock: () => new Date(),
      log: (line) => logged.push(line),
      loopbackOnly: true,
      token: TOKEN,
      approverToken: APPROVER_TOKEN,
      storageUrl: db.url,
      onStoreError: () => undefined,
    });
    running.push(node);
    const url = await node.server.listen({ port: 0, host: "127.0.0.1" });
    expect((await call(url, "POST", "/v1/decide", READ)).json).toMatchObject({ route: "accept" });
    const waiting = call(url, "POST", "/v1/decide?wait=true&session=s", WRITE);
    const id = await eventually(async () =>
      at((await call(url, "GET", "/v1/consent?status=pending")).json, "requests", 0, "id"),
    );

    await setConnections(false);
    await eventually(async () => (await call(url, "GET", "/readyz")).status === 503);
    // what to do, not only that it is not ready (before: "the state store does not answer")
    const probe = await call(url, "GET", "/readyz");
    // it passes by itself: the probe says when to look again, as the refusals do
    expect(probe.retryAfter).toBe("1");
    const notReady = at(probe.json, "error", "message");
    expect(notReady).toMatch(
      /: it resumes by itself once the database answers again \(the cause is in the service log\)$/,
    );
    for (let i = 0; i < 3; i++) {
      const refused = await call(url, "POST", "/v1/decide", READ);
      expect(refused.status).toBe(503);
      expect(refused.json).toMatchObject({ error: { code: "audit_unavailable" } });
      // it passes by itself (the chain is retried every 500 ms): the 503 says when to come back
      expect(refused.retryAfter).toBe("1");
    }

    // the outage is said once, however many connections dropped and requests were refused
    const down = logged.filter((l) => l.startsWith("storage: database unreachable"));
    expect(down).toHaveLength(1);
    expect(down[0]).toMatch(/; decisions are refused \(503\) until it answers again$/);
    expect(logged.some((l) => l.startsWith("storage: database reachable again"))).toBe(false);
    const refusals = logged.filter((l) => l.includes("audit_unavailable"));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatch(/^decision refused \(503 audit_unavailable\): the audit trail could not record/);
    expect(logged.filter((l) => l.startsWith("internal error"))).toEqual([]);

    await setConnections(true);
    await eventually(async () => (await call(url, "GET", "/readyz")).status === 200);
    const resumed = await eventually(async () => {
      const answer = await call(url, "POST", "/v1/decide", READ);
      return answer.status === 200 ? answer : false;
    });
    expect(resumed.json).toMatchObject({ route: "accept" });
    const back = logged.filter((l) => l.startsWith("storage: database reachable again"));
    expect(back).toHaveLength(1);
    expect(back[0]).toMatch(/^storage: database reachable again after \d+\.\ds$/);
    expect(logged.filter((l) => l.startsWith("storage: database unreachable"))).toHaveLength(1);
    expect(logged.indexOf(back[0] ?? "")).toBeGreaterThan(logged.indexOf(down[0] ?? ""));

    const answered = await call(url, "POST", `/v1/consent/${String(id)}/response`, { decision: "approved" });
    expect(answered.status).toBe(200);
    expect((await waiting).json).toMatchObject({ route: "accept", consent: { outcome: "approved", request_id: id } });

    await node.stores.auditLog.flush();
    const verified = await call(url, "GET", "/v1/audit/verify");
    expect(verified.json).toMatchObject({ ok: true, problem: null });
    const approved = await call(url, "GET", `/v1/audit?request_id=${String(id)}&event_type=consent_approved`);
    expect(at(approved.json, "events", 0, "event", "event_type")).toBe("consent_approved");
  });
});
