/**
 * A node whose clock is far from the database's: every node reads its own clock for a request's expiry, a
 * window approval's end and a rate limit's window, so before, a node a minute behind honoured an ended
 * window approval a minute late and one ahead wrote windows that ended late. Now it refuses every decision
 * (503) and `/readyz` says not ready, one log line says why, and once its clock is set right it decides again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openEmbeddedServer, type EmbeddedServer } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { APPROVER_TOKEN, at, eventually, namedPipelines, readJson, testKeys, tokenFor, type Json } from "../harness.js";

const TOKEN = "clock-skew-token-0123456789";
const db = useTestDatabase();
const dirs: string[] = [];
const running: EmbeddedServer[] = [];

afterAll(async () => {
  for (const s of running) await s.close().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${tokenFor(path, TOKEN)}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await readJson(res) };
}

const READ = { tool: "read_file", server: "fs", arguments: { path: "/srv/a.txt" } };
const WRITE = { tool: "write_file", server: "fs", arguments: { path: "/srv/b.txt", text: "x" } };

/** A node whose clock is `offset.ms` off the real one (the database's). */
async function node(offset: { ms: number }, logged: string[]): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), "acp-skew-"));
  dirs.push(home);
  const opened = await openEmbeddedServer({
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"),
    ...namedPipelines(),
    keys: testKeys(),
    clock: () => new Date(Date.now() + offset.ms),
    log: (line) => logged.push(line),
    loopbackOnly: true,
    token: TOKEN,
    approverToken: APPROVER_TOKEN,
    storageUrl: db.url,
    onStoreError: () => undefined,
  });
  running.push(opened);
  return opened.server.listen({ port: 0, host: "127.0.0.1" });
}

describe("a node whose clock is far from the database's", () => {
  it("refuses every decision and is not ready until its clock is set right", async () => {
    const offset = { ms: -60_000 };
    const logged: string[] = [];
    const url = await node(offset, logged);

    const refused = await call(url, "POST", "/v1/decide", READ);
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ error: { code: "audit_unavailable" } });
    const notReady = await call(url, "GET", "/readyz");
    expect(notReady.status).toBe(503);
    expect(at(notReady.json, "error", "message")).toMatch(/this node's clock is more than 2 s from the database's/);
    // the refusal's log line names the cause
    expect(logged.some((l) => /^decision refused \(503 audit_unavailable\): .*this node's clock is/.test(l))).toBe(
      true,
    );
    const said = logged.filter((l) => l.startsWith("storage:"));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^storage: this node's clock is (59\.\d|60\.\d)s behind the database's \(at most 2000 ms allowed\): decisions are refused \(503\)/,
    );

    offset.ms = 0; // NTP set it right
    expect((await call(url, "GET", "/readyz")).status).toBe(200);
    expect((await call(url, "POST", "/v1/decide", READ)).json).toMatchObject({ route: "accept" });
    expect(logged).toContain("storage: this node's clock agrees with the database's again");
  });

  it("refuses a node that runs ahead as well, and lets one within the limit decide", async () => {
    const ahead = await node({ ms: 30_000 }, []);
    expect((await call(ahead, "POST", "/v1/decide", READ)).status).toBe(503);
    const close = await node({ ms: 500 }, []);
    expect((await call(close, "POST", "/v1/decide", READ)).json).toMatchObject({ route: "accept" });
    expect((await call(close, "GET", "/readyz")).status).toBe(200);
  });

  it("does not take an approval through its API for another node's call, and takes a denial", async () => {
    const good = await node({ ms: 0 }, []);
    const skewed = await node({ ms: -60_000 }, []);
    const waiting = call(good, "POST", "/v1/decide?wait=true&session=s", WRITE);
    const id = await eventually(async () =>
      at((await call(good, "GET", "/v1/consent?status=pending")).json, "requests", 0, "id"),
    );
    // a minute behind, it would take an answer a minute after the request expired
    const approved = await call(skewed, "POST", `/v1/consent/${String(id)}/response`, { decision: "approved" });
    expect(approved.status).toBe(503);
    expect(approved.json).toMatchObject({ error: { code: "state_unavailable" } });
    expect(at((await call(good, "GET", `/v1/consent/${String(id)}`)).json, "status")).toBe("pending");
    const denied = await call(skewed, "POST", `/v1/consent/${String(id)}/response`, {
      decision: "denied",
      reason: "not now",
    });
    expect(denied.status).toBe(200);
    expect((await waiting).json).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
  });
});
