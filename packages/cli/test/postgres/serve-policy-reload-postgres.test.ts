/**
 * Two `acp serve` nodes on one PostgreSQL, each with its own policy file: an edit of node A's file is picked
 * up by A alone (B goes on deciding by its own file until it is edited too), each node records its reload in
 * the one shared chain, and that chain verifies.
 */
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { runCli } from "../run.js";
import { startServeNode, stopServeNode, type ServeNode } from "./fixtures/serve-node.js";

const ALLOWS =
  'version: "1"\ndefault_action: allow\nrules:\n  - id: echo-allowed\n    match: { tool: echo }\n    action: allow\n';
const DENIES =
  'version: "1"\ndefault_action: allow\nrules:\n  - id: echo-denied\n    match: { tool: echo }\n    action: deny\n';

const sha256 = (text: string): string => `sha256:${createHash("sha256").update(text).digest("hex")}`;
const db = useTestDatabase();
const homes: string[] = [];
const nodes: ServeNode[] = [];

/** Replaces a home's policy as an editor saves: a new file renamed over the old one. */
function savePolicy(home: string, text: string): void {
  writeFileSync(join(home, "policy.yml.tmp"), text);
  renameSync(join(home, "policy.yml.tmp"), join(home, "policy.yml"));
}

async function decide(node: ServeNode): Promise<{ route: string; rule: string | null; policy_hash: string }> {
  const res = await fetch(`${node.url}/v1/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tool: "echo", arguments: { message: "hi" } }),
  });
  return ((await res.json()) as { decision: { route: string; rule: string | null; policy_hash: string } }).decision;
}

/** Decides on `node` until its route is `route` (a node looks at its file at most every 250 ms); bounded. */
async function decideUntil(node: ServeNode, route: string): Promise<{ rule: string | null; policy_hash: string }> {
  for (let i = 0; i < 400; i++) {
    const decided = await decide(node);
    if (decided.route === route) return decided;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${node.url} never decided ${route}`);
}

let homeA = "";
let homeB = "";
let a: ServeNode;
let b: ServeNode;
const envOf = (home: string): Record<string, string> => ({ ACP_HOME: home, HOME: home, ACP_STORAGE_URL: db.url });

beforeAll(async () => {
  homeA = mkdtempSync(join(tmpdir(), "acp-reload-node-a-"));
  homeB = mkdtempSync(join(tmpdir(), "acp-reload-node-b-"));
  homes.push(homeA, homeB);
  const init = await runCli(["init", "--no-passphrase"], { env: { HOME: homeA, ACP_HOME: homeA }, now: new Date() });
  expect(init.code, init.stderr).toBe(0);
  writeFileSync(join(homeA, "policy.yml"), ALLOWS);
  cpSync(homeA, homeB, { recursive: true }); // the same keys and policy, each node its own copy
  a = await startServeNode(envOf(homeA));
  b = await startServeNode(envOf(homeB));
  nodes.push(a, b);
}, 120_000);

afterAll(async () => {
  await Promise.all(nodes.map((node) => stopServeNode(node)));
  for (const home of homes) rmSync(home, { recursive: true, force: true });
}, 60_000);

describe("acp serve nodes on one PostgreSQL: each reloads its own policy file", () => {
  it("node A takes its edit alone, B its own later; both reloads are in the one chain, which verifies", async () => {
    expect(await decide(a)).toMatchObject({ route: "accept", policy_hash: sha256(ALLOWS) });
    expect(await decide(b)).toMatchObject({ route: "accept", policy_hash: sha256(ALLOWS) });

    savePolicy(homeA, DENIES);
    expect(await decideUntil(a, "refuse")).toMatchObject({ rule: "policy:echo-denied", policy_hash: sha256(DENIES) });
    expect(await decide(b)).toMatchObject({ route: "accept", rule: "policy:echo-allowed" });

    savePolicy(homeB, DENIES);
    expect(await decideUntil(b, "refuse")).toMatchObject({ rule: "policy:echo-denied", policy_hash: sha256(DENIES) });

    await Promise.all(nodes.map((node) => stopServeNode(node)));
    const verified = await runCli(["audit", "verify"], { env: envOf(homeA) });
    expect(verified.code, verified.stderr).toBe(0);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    let lines: string[];
    try {
      lines = (await client.query<{ line: string }>("SELECT line FROM acp_audit_events ORDER BY seq")).rows.map(
        (r) => r.line,
      );
    } finally {
      await client.end();
    }
    const events = lines.map((line) => JSON.parse(line) as { event_type: string; metadata: Record<string, unknown> });
    const reloads = events.filter((e) => e.event_type === "policy_reloaded").map((e) => e.metadata);
    expect(reloads).toEqual([
      { file: join(homeA, "policy.yml"), policy_hash: sha256(DENIES), previous_policy_hash: sha256(ALLOWS) },
      { file: join(homeB, "policy.yml"), policy_hash: sha256(DENIES), previous_policy_hash: sha256(ALLOWS) },
    ]);
  }, 120_000);
});
