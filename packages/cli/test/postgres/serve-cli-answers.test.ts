/**
 * `acp pending`, `acp approve` and `acp deny` (the built command, as separate processes, from a terminal
 * with its own empty $ACP_HOME) against the PostgreSQL database of a running `acp serve` node: the
 * request raised on the node is listed, and an answer given on the command line reaches the waiting call
 * on the node (LISTEN/NOTIFY), which completes signed and audited. Bad input changes nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STARTER_POLICY } from "@acp/store";
import pg from "pg";
import { createTestDatabase, useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { runCli } from "../run.js";
import { runBuiltAcp, startServeNode, stopServeNode, type ServeNode } from "./fixtures/serve-node.js";

const TOKEN = "cli-answers-test-token-0123456789";
/** The approvers' token: the audit trail is theirs to read (the agents' token is 403 there). */
const APPROVER_TOKEN = "cli-answers-approver-token-0123456789";
const db = useTestDatabase();
const homes: string[] = [];
let node: ServeNode;
let nodeHome: string;
/** The terminal the person answers from: no serve.json, no state.db, only the storage URL. */
let terminalHome: string;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${path.startsWith("/v1/audit?") ? APPROVER_TOKEN : TOKEN}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await res.json() };
}

function at(value: unknown, ...path: string[]): unknown {
  let v = value;
  for (const key of path) v = typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}

/** The terminal's environment: the storage URL from ACP_STORAGE_URL. */
function terminalEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ACP_HOME: terminalHome, HOME: terminalHome, USER: "tester", ACP_STORAGE_URL: db.url, ...extra };
}

interface Listed {
  id: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  reasons: { message?: string }[];
  category: unknown;
  risk_level: unknown;
  rule: unknown;
  session_id: string | null;
  created_at: string;
  expires_at: string;
}

/** `acp pending --json` (built) until exactly one request is listed. */
async function onePendingFromCli(): Promise<Listed> {
  for (;;) {
    const out = await runBuiltAcp(["pending", "--json"], terminalEnv());
    expect(out.code, out.stderr).toBe(0);
    const listed = JSON.parse(out.stdout) as Listed[];
    expect(listed.length).toBeLessThan(2);
    if (listed[0] !== undefined) return listed[0];
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Audit events of one consent request, as the node lists them. */
async function auditOf(requestId: string): Promise<{ event_type: string; metadata?: Record<string, unknown> }[]> {
  const list = await call("GET", "/v1/audit?limit=500");
  const events = at(list.json, "events") as { event: { event_type: string; request_id: string | null } }[];
  return events.map((e) => e.event).filter((e) => e.request_id === requestId);
}

beforeAll(async () => {
  nodeHome = mkdtempSync(join(tmpdir(), "acp-cli-node-"));
  terminalHome = mkdtempSync(join(tmpdir(), "acp-cli-terminal-"));
  homes.push(nodeHome, terminalHome);
  const init = await runCli(["init", "--no-passphrase"], {
    env: { HOME: nodeHome, ACP_HOME: nodeHome },
    now: new Date(),
  });
  expect(init.code, init.stderr).toBe(0);
  writeFileSync(join(nodeHome, "policy.yml"), STARTER_POLICY);
  node = await startServeNode({
    ACP_HOME: nodeHome,
    HOME: nodeHome,
    ACP_STORAGE_URL: db.url,
    ACP_BRIDGE_TOKEN: TOKEN,
    ACP_APPROVER_TOKEN: APPROVER_TOKEN,
  });
}, 120_000);

afterAll(async () => {
  if (node !== undefined) await stopServeNode(node);
  for (const home of homes) rmSync(home, { recursive: true, force: true });
}, 60_000);

describe("acp pending / approve / deny on the PostgreSQL of acp serve", () => {
  it("lists the node's request and approves it from another terminal; the node completes it, signed and audited", async () => {
    const waiting = call("POST", "/v1/decide?wait=true", {
      tool: "write_file",
      arguments: { path: "/tmp/x", api_token: "s3cret-value" },
    });
    const listed = await onePendingFromCli();
    expect(listed).toMatchObject({
      server: "http",
      tool: "write_file",
      arguments: { path: "/tmp/x", api_token: "[redacted]" },
    });
    // no ?session=: the call is a session of its own
    expect(listed.session_id).toMatch(/^http-dc_[0-9a-f]{32}$/);
    expect(listed.id).toMatch(/^cr_[0-9a-f]{32}$/);
    for (const key of ["category", "risk_level", "rule", "created_at", "expires_at"])
      expect(listed).toHaveProperty(key);
    expect(Date.parse(listed.expires_at)).toBeGreaterThan(Date.parse(listed.created_at));
    expect(listed.reasons.length).toBeGreaterThan(0);
    expect(JSON.stringify(listed)).not.toContain("s3cret-value");

    // the URL as a flag this time (the terminal's environment has none)
    const env = terminalEnv({ ACP_STORAGE_URL: "" });
    const approved = await runBuiltAcp(["approve", listed.id, "--storage-url", db.url, "--json"], env);
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ id: listed.id, decision: "approved", scope: "once" });

    const done = await waiting;
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({
      route: "accept",
      consent: { outcome: "approved", request_id: listed.id, arguments: { path: "/tmp/x", api_token: "s3cret-value" } },
    });
    const events = await auditOf(listed.id);
    const approval = events.find((e) => e.event_type === "consent_approved");
    expect(approval?.metadata?.["consent_response"]).toMatchObject({
      request_id: listed.id,
      decision: "approved",
      approver: { id: "cli:tester" },
      proof: { algorithm: "Ed25519" },
    });
    expect((await runBuiltAcp(["pending", "--json"], terminalEnv())).stdout.trim()).toBe("[]");

    // already decided: refused (exit 3), nothing changes
    const again = await runBuiltAcp(["deny", listed.id], terminalEnv());
    expect(again.code).toBe(3);
    expect(again.stderr).toContain(`consent request \`${listed.id}\` was already approved`);
    expect(at((await call("GET", `/v1/consent/${listed.id}`)).json, "status")).toBe("approved");
    expect((await auditOf(listed.id)).length).toBe(events.length);
  }, 120_000);

  it("denies from another terminal: the waiting call on the node is refused with the reason, audited", async () => {
    const waiting = call("POST", "/v1/decide?wait=true", { tool: "write_file", arguments: { path: "/tmp/y" } });
    const { id } = await onePendingFromCli();
    const denied = await runBuiltAcp(["deny", id, "--reason", "wrong file"], terminalEnv());
    expect(denied).toMatchObject({ code: 0, stdout: `denied ${id}\n` });
    const done = await waiting;
    expect(done.json).toMatchObject({ route: "refuse", consent: { outcome: "denied", request_id: id } });
    expect(String(at(done.json, "consent", "reason"))).toBe("`tester` via cli: wrong file");
    const denial = (await auditOf(id)).find((e) => e.event_type === "consent_denied");
    expect(denial?.metadata?.["consent_response"]).toMatchObject({
      request_id: id,
      decision: "denied",
      approver: { id: "cli:tester" },
    });
    // the reason is recorded beside the signed response, not in it (§4.2: a response holding it would not
    // verify with the public key alone, as acp audit verify checks)
    expect(denial?.metadata?.["consent_response"]).not.toHaveProperty("reason");
    expect(JSON.stringify(denial?.metadata)).toContain("wrong file");
  }, 120_000);

  it("bad input is a clear error, exit non-zero, and changes nothing", async () => {
    const waiting = call("POST", "/v1/decide?wait=true", { tool: "write_file", arguments: { path: "/tmp/z" } });
    const { id } = await onePendingFromCli();

    const unknown = await runBuiltAcp(["approve", `cr_${"0".repeat(32)}`], terminalEnv());
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain(`no pending consent request \`cr_${"0".repeat(32)}\``);

    const unreachable = await runBuiltAcp(
      ["approve", id, "--storage-url", "postgres://acp:hunter2@127.0.0.1:1/acp"],
      terminalEnv(),
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(
      "--storage-url: cannot reach PostgreSQL at postgres://acp:***@127.0.0.1:1/acp",
    );
    expect(unreachable.stderr).not.toContain("hunter2");
    const unreachableList = await runBuiltAcp(
      ["pending"],
      terminalEnv({ ACP_STORAGE_URL: "postgres://127.0.0.1:1/acp" }),
    );
    expect(unreachableList.code).toBe(1);
    expect(unreachableList.stderr).toContain("ACP_STORAGE_URL: cannot reach PostgreSQL");

    // the node's own home says its state is in PostgreSQL: without a URL the command does not read state.db
    const noUrl = await runBuiltAcp(["approve", id], { ACP_HOME: nodeHome, HOME: nodeHome, USER: "tester" });
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toContain("keeps its state in PostgreSQL: pass --storage-url or set ACP_STORAGE_URL");

    expect((await onePendingFromCli()).id).toBe(id); // still pending, unanswered
    expect(await auditOf(id).then((events) => events.map((e) => e.event_type))).toEqual(["consent_requested"]);

    const answered = await runBuiltAcp(["approve", id, "--for-session"], terminalEnv());
    expect(answered.code, answered.stderr).toBe(0);
    expect((await waiting).json).toMatchObject({ route: "accept", consent: { outcome: "approved", scope: "session" } });
  }, 120_000);

  it("on a database no acp serve has prepared: nothing pending, the id unknown, no table created", async () => {
    const empty = await createTestDatabase();
    try {
      const env = terminalEnv({ ACP_STORAGE_URL: empty.url });
      const listed = await runBuiltAcp(["pending"], env);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^no pending consent requests in postgres:\/\/\S+\n$/);
      expect(listed.stdout).not.toContain(new URL(empty.url).password || "\u0000");
      const unknown = await runBuiltAcp(["deny", `cr_${"1".repeat(32)}`], env);
      expect(unknown.code).toBe(4);
      expect(unknown.stderr).toContain("no pending consent request");
      const client = new pg.Client({ connectionString: empty.url });
      await client.connect();
      try {
        const tables = await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
        expect(tables.rows[0]).toEqual({ n: 0 });
      } finally {
        await client.end();
      }
    } finally {
      await empty.drop();
    }
  }, 60_000);

  it("the node's audit chain, with the command-line answers in it, verifies", async () => {
    expect((await call("GET", "/v1/audit/verify")).json).toMatchObject({ ok: true });
  }, 30_000);
});
