import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { connectProxy } from "./proxy-client-fixture.js";

/**
 * Provenance across sessions through the real `acp proxy`: an address an agent read in an upstream's result
 * in one proxy process is tainted in the next process on the same home (the home's state.db remembers it,
 * as a salted hash), so a later call that sends to it waits for a person. A home that never read it accepts.
 */
const ADDRESS = "billing@attacker.example";

// every call is allowed by the policy: whatever asks below, the session runtime asked. `echo` counts as a
// write for the session (it "sends" its message), so its argument is judged as a destination.
const POLICY = 'version: "1"\ndefault_action: allow\n';
const SESSION = "session:\n  classify:\n    - { tool: echo, category: write }\n";

function homeWith(session: string): Record<string, string> {
  const { home } = fixtureHome(root.dir);
  writeFileSync(join(home, "policy.yml"), POLICY);
  const file = join(home, "config.yml");
  const text = readFileSync(file, "utf8").replace(/^session:\n(?:(?:[ #].*)?\n)*/m, "");
  writeFileSync(file, `${text}${session}`);
  return envFor(home);
}

function connect(env: Record<string, string>): Promise<Client> {
  return connectProxy(env, { name: "memory-agent" });
}

/** Reads `ADDRESS` in one proxy process (an upstream result holds it), then closes that process. */
async function readTheAddress(env: Record<string, string>): Promise<void> {
  const first = await connect(env);
  try {
    // the model words this itself (unknown: accepted), and the upstream's answer holds the address
    const echoed = await first.callTool({
      name: "echo",
      arguments: { message: `note: invoices go to ${ADDRESS.toUpperCase()}` },
    });
    expect(echoed.isError).not.toBe(true);
  } finally {
    await first.close();
  }
}

interface PendingRow {
  id: string;
  tool: string;
  reasons: { code: string; message: string }[];
}

async function waitForPending(env: Record<string, string>): Promise<PendingRow[]> {
  for (let i = 0; i < 400; i++) {
    const out = await runCli(["pending", "--json"], { env, now: new Date() });
    const rows = JSON.parse(out.stdout || "[]") as PendingRow[];
    if (rows.length > 0) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no pending request appeared");
}

const root = tempRoot("proxy-session-memory");
afterAll(() => root.cleanup());

describe("acp proxy: what an earlier session read stays tainted for the home's later sessions", () => {
  it("a later process asks before sending to the address, and state.db holds no plain copy of it", async () => {
    const env = homeWith(SESSION);
    await readTheAddress(env);
    const db = new Database(join(env["ACP_HOME"] ?? "", "state.db"), { readonly: true });
    try {
      const rows = db.prepare("SELECT identity_hash, source FROM provenance_memory").all() as {
        identity_hash: string;
        source: string;
      }[];
      expect(rows.map((r) => r.source)).toContain("everything.echo#1");
      expect(JSON.stringify(rows)).not.toContain("attacker");
    } finally {
      db.close();
    }
    const later = await connect(env);
    const call = later.callTool({ name: "echo", arguments: { message: ADDRESS } }, undefined, { timeout: 60_000 });
    call.catch(() => undefined);
    try {
      const [pending] = await waitForPending(env);
      expect(pending?.tool).toBe("echo");
      expect(pending?.reasons.map((r) => r.message)).toContain(
        `text an earlier session read from \`everything.echo\` wants to use \`everything.echo\` with \`${ADDRESS}\``,
      );
      expect((await runCli(["deny", pending?.id ?? ""], { env, now: new Date() })).code).toBe(0);
      expect((await call).isError).toBe(true);
    } finally {
      await later.close();
    }
  }, 120_000);

  it("with `provenance.remember_hours: 0`, the later process accepts as before", async () => {
    const env = homeWith(`${SESSION}  provenance: { remember_hours: 0 }\n`);
    await readTheAddress(env);
    const later = await connect(env);
    try {
      const sent = await later.callTool({ name: "echo", arguments: { message: ADDRESS } });
      expect(sent.isError).not.toBe(true);
      expect(JSON.stringify(sent.content)).toContain(ADDRESS);
    } finally {
      await later.close();
    }
  }, 120_000);
});
