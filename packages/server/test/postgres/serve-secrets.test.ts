/**
 * `acp serve` hides known secret values (the vault's) from its audit chain: a value sent in a request's
 * tool, agent or arguments never reaches the audit file (SQLite) or table (PostgreSQL), and the chain
 * still verifies.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openEmbeddedServer, type EmbeddedServer } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { namedPipelines, READ_EVENT, testKeys } from "../harness.js";

const db = useTestDatabase();
const dirs: string[] = [];
const opened: EmbeddedServer[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Looks like nothing the default rules catch: only the known-secret list can hide it. */
const SECRET = "plain-vault-value-7f3a9c";
const TOKEN = "test-token-0123456789";

async function start(kind: "sqlite" | "postgres"): Promise<{ server: EmbeddedServer; url: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "acp-serve-secrets-"));
  dirs.push(dir);
  const server = await openEmbeddedServer({
    statePath: join(dir, "state.db"),
    auditPath: join(dir, "audit.jsonl"),
    ...(kind === "postgres" ? { storageUrl: db.url } : {}),
    ...namedPipelines(),
    keys: testKeys(),
    clock: () => new Date(),
    loopbackOnly: true,
    token: TOKEN,
    secrets: () => [SECRET],
  });
  opened.push(server);
  return { server, url: await server.server.listen({ port: 0, host: "127.0.0.1" }), dir };
}

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Every stored audit row as text: the JSONL file, or the table's rows. */
async function storedAudit(kind: "sqlite" | "postgres", dir: string): Promise<string> {
  if (kind === "sqlite") return readFileSync(join(dir, "audit.jsonl"), "utf8");
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const rows = await client.query("SELECT * FROM acp_audit_events ORDER BY seq");
    return rows.rows.map((r) => JSON.stringify(r)).join("\n");
  } finally {
    await client.end();
  }
}

describe.each(["sqlite", "postgres"] as const)("serve on %s with a known secret", (kind) => {
  it("never writes the secret sent in a request's tool, agent or arguments to the audit", async () => {
    const { server, url, dir } = await start(kind);
    const check = await post(`${url}/pre-tool-check`, {
      ...READ_EVENT,
      agent_id: `agent-${SECRET}`,
      proposed_arguments: { query: `find ${SECRET}` },
    });
    expect(check.status).toBe(200);
    const decide = await post(`${url}/v1/decide`, {
      tool: `lookup_${SECRET}`,
      agent: SECRET,
      arguments: { key: SECRET, note: `the key is ${SECRET}` },
    });
    expect(decide.status).toBe(200);
    await server.stores.auditLog.flush();

    const stored = await storedAudit(kind, dir);
    const decisions = stored.split("\n").filter((line) => line.includes("policy_evaluated"));
    expect(decisions).toHaveLength(2); // both decisions are recorded…
    expect(stored).toContain("agent-[REDACTED]"); // …with the secret hidden where it was
    expect(stored).toContain("lookup_[REDACTED]");
    expect(stored).not.toContain(SECRET);
    expect(await server.stores.audit.verify()).toMatchObject({ ok: true });
  });
});
