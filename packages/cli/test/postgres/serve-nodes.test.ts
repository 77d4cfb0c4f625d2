/**
 * Two `acp serve` nodes as separate processes on one real PostgreSQL database (ACP_STORAGE_URL): a call
 * waiting on node A is approved through node B's API and completes on A; the nonce A spent is refused on
 * B; a rate limit is shared; A killed mid-wait loses nothing and its request completes after a restart;
 * the audit trail is one chain that verifies on both nodes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STARTER_POLICY } from "@acp/store";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { runCli } from "../run.js";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const viteNode = `${root}node_modules/.bin/vite-node`;
const script = fileURLToPath(new URL("./fixtures/acp-process.ts", import.meta.url));
const TOKEN = "two-node-test-token-0123456789";
/** The approvers' token: the only one that answers consent over the API. */
const APPROVER_TOKEN = "two-node-approver-token-0123456789";
const db = useTestDatabase();
const homes: string[] = [];
const children: ChildProcess[] = [];

/** The starter policy with a shared rate limit on `lookup_*` (3 a minute). */
const POLICY = STARTER_POLICY.replace(
  "rules:\n",
  `rules:
  - id: limited-lookups
    match:
      tool: "lookup_*"
    action: allow
    rate_limit: "3/minute"
`,
);

interface Node {
  readonly url: string;
  readonly consoleLink: string;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
}

function startNode(home: string): Promise<Node> {
  if (!existsSync(viteNode)) throw new Error(`${viteNode} is missing (it comes with vitest)`);
  const child = spawn(viteNode, ["-c", `${root}vitest.config.ts`, script, "--", "serve", "--port", "0", "--json"], {
    cwd: root,
    env: {
      ...process.env,
      ACP_HOME: home,
      ACP_STORAGE_URL: db.url,
      ACP_BRIDGE_TOKEN: TOKEN,
      ACP_APPROVER_TOKEN: APPROVER_TOKEN,
      HOME: home,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return new Promise<Node>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const start = out.indexOf("{\n");
      const end = out.indexOf("\n}\n", start);
      if (start < 0 || end < 0) return;
      const ready = JSON.parse(out.slice(start, end + 2)) as { url: string; console_link: string };
      resolve({ url: ready.url, consoleLink: ready.console_link, child, exited });
    });
    void exited.then((code) => reject(new Error(`acp serve exited (${String(code)}) before listening: ${err.trim()}`)));
  });
}

async function call(
  node: Node,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: {
      // the approvers' token answers consent and reads the audit trail (the agents' token is 403 there)
      authorization: `Bearer ${path.endsWith("/response") || path.startsWith("/v1/audit?") ? APPROVER_TOKEN : TOKEN}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await res.json() };
}

/** The value at a path of keys in a parsed body, or undefined. */
function at(value: unknown, ...path: string[]): unknown {
  let v = value;
  for (const key of path) v = typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}

/** The one pending request on a node (polls until there is exactly one). */
async function onePending(node: Node): Promise<string> {
  for (;;) {
    const list = await call(node, "GET", "/v1/consent?status=pending");
    const ids = (at(list.json, "requests") as { id: string }[]).map((r) => r.id);
    if (ids.length === 1 && ids[0] !== undefined) return ids[0];
    expect(ids.length).toBeLessThan(2);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let a: Node;
let b: Node;
let homeA: string;

beforeAll(async () => {
  homeA = mkdtempSync(join(tmpdir(), "acp-node-a-"));
  const homeB = mkdtempSync(join(tmpdir(), "acp-node-b-"));
  homes.push(homeA, homeB);
  const init = await runCli(["init", "--no-passphrase"], { env: { HOME: homeA, ACP_HOME: homeA }, now: new Date() });
  expect(init.code, init.stderr).toBe(0);
  writeFileSync(join(homeA, "policy.yml"), POLICY);
  cpSync(homeA, homeB, { recursive: true }); // the nodes share the keys and the policy, as a deployment would
  [a, b] = await Promise.all([startNode(homeA), startNode(homeB)]);
}, 120_000);

afterAll(async () => {
  const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
  const stopped = running.map((c) => new Promise((resolve) => c.once("exit", resolve)));
  for (const child of running) child.kill("SIGTERM");
  await Promise.all(stopped);
  for (const home of homes) rmSync(home, { recursive: true, force: true });
}, 60_000);

describe("two acp serve nodes on one PostgreSQL", () => {
  let firstId = "";

  it("a call waiting on node A is approved through node B and completes on A", async () => {
    const waiting = call(a, "POST", "/v1/decide?wait=true", { tool: "write_file", arguments: { path: "/tmp/x" } });
    firstId = await onePending(b);
    const answer = await call(b, "POST", `/v1/consent/${firstId}/response`, { decision: "approved" });
    expect(answer.status).toBe(200);
    const done = await waiting;
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ route: "accept", consent: { outcome: "approved", request_id: firstId } });
  }, 60_000);

  it("the approval's nonce, spent on A, is refused on B", async () => {
    const replay = await call(b, "POST", `/v1/consent/${firstId}/complete`);
    expect(replay.status).toBe(409);
    expect(at(replay.json, "error", "code")).toBe("consent_already_completed");
  }, 30_000);

  it("a console sign-in link printed by A signs in on B (sessions are shared)", async () => {
    const token = new URL(a.consoleLink).searchParams.get("token") ?? "";
    const signIn = await fetch(`${b.url}/console/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token }).toString(),
      redirect: "manual",
    });
    expect(signIn.status).toBe(303);
    const again = await fetch(`${a.url}/console/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token }).toString(),
      redirect: "manual",
    });
    expect(again.status).toBe(401); // one use, on any node
  }, 30_000);

  it("a rate limit is shared: 3 a minute across both nodes", async () => {
    const routes: string[] = [];
    for (const node of [a, b, a, b]) {
      const res = await call(node, "POST", "/v1/decide", { tool: "lookup_customer", arguments: { id: 1 } });
      routes.push(at(res.json, "route") as string);
    }
    expect(routes.slice(0, 3)).toEqual(["accept", "accept", "accept"]);
    expect(routes[3]).not.toBe("accept");
  }, 30_000);

  it("node A killed mid-wait loses nothing: after a restart its request is decided and completed", async () => {
    const lost = call(a, "POST", "/v1/decide?wait=true", { tool: "write_file", arguments: { path: "/tmp/y" } });
    const id = await onePending(b);
    a.child.kill("SIGKILL");
    await expect(lost).rejects.toThrow();
    await a.exited;
    expect(await onePending(b)).toBe(id); // still pending in the shared table

    a = await startNode(homeA);
    const completing = call(a, "POST", `/v1/consent/${id}/complete`);
    await new Promise((r) => setTimeout(r, 200));
    const answer = await call(b, "POST", `/v1/consent/${id}/response`, { decision: "approved", scope: "once" });
    expect(answer.status).toBe(200);
    const done = await completing;
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ outcome: "approved", request_id: id, arguments: { path: "/tmp/y" } });
    expect(at(done.json, "consent_response")).toMatchObject({ request_id: id, decision: "approved" });
    expect((await call(b, "POST", `/v1/consent/${id}/complete`)).status).toBe(409);
  }, 120_000);

  it("the audit trail is one chain that verifies on both nodes", async () => {
    const [onA, onB] = await Promise.all([call(a, "GET", "/v1/audit/verify"), call(b, "GET", "/v1/audit/verify")]);
    expect(onA.json).toMatchObject({ ok: true });
    expect(onB.json).toMatchObject({ ok: true });
    const [listA, listB] = await Promise.all([
      call(a, "GET", "/v1/audit?limit=200"),
      call(b, "GET", "/v1/audit?limit=200"),
    ]);
    expect(at(listA.json, "total")).toBe(at(listB.json, "total"));
    const types = (at(listB.json, "events") as { event: { event_type: string; request_id: string | null } }[]).map(
      (e) => `${e.event.event_type}`,
    );
    expect(types).toContain("consent_requested");
    expect(types.filter((t) => t === "consent_approved").length).toBe(2);
  }, 30_000);
});
