import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { checkConsentProof, type ConsentResponseV02 } from "@acp/core";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");

const POLICY = `version: "1"
default_action: deny
rules:
  - id: echo-asks
    match: { tool: echo }
    action: ask
    timeout: 60
  - id: sums-run
    match: { tool: get-sum }
    action: allow
`;

interface PendingRow {
  id: string;
  tool: string;
  arguments: Record<string, unknown>;
}

async function waitForPending(env: Record<string, string>): Promise<PendingRow> {
  for (let i = 0; i < 400; i++) {
    const out = await runCli(["pending", "--json"], { env, now: new Date() });
    const rows = JSON.parse(out.stdout || "[]") as PendingRow[];
    if (rows.length > 0 && rows[0] !== undefined) return rows[0];
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no pending consent request appeared");
}

function auditEvents(
  home: string,
): { event_type: string; metadata: Record<string, unknown>; policy_rule: string | null }[] {
  return readFileSync(join(home, "audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map(
      (line) =>
        JSON.parse(line) as { event_type: string; metadata: Record<string, unknown>; policy_rule: string | null },
    );
}

describe("acp proxy wired end to end: policy, consent through `acp approve`, signed proof, audit", () => {
  const root = tempRoot("proxy-e2e");
  let home = "";
  let env: Record<string, string> = {};
  let client: Client;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/proxy-wiring.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    ({ home } = fixtureHome(root.dir));
    writeFileSync(join(home, "policy.yml"), POLICY);
    env = envFor(home);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything"],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    client = new Client({ name: "e2e-agent", version: "1.0.0" });
    await client.connect(transport);
  }, 120_000);

  afterAll(async () => {
    await client.close();
    root.cleanup();
  });

  it("forwards what the policy allows", async () => {
    const result = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.content)).toContain("5");
  });

  it("refuses what the policy denies, naming the rule, without reaching the server", async () => {
    const result = await client.callTool({ name: "get-env", arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("default");
    expect(JSON.stringify(result.content)).not.toContain("PATH");
  });

  it("holds an ask until a person approves with `acp approve`, then forwards", async () => {
    const call = client.callTool({ name: "echo", arguments: { message: "hello from the agent" } }, undefined, {
      timeout: 60_000,
    });
    const pending = await waitForPending(env);
    expect(pending.id).toMatch(/^cr_/);
    expect(pending.tool).toBe("echo");
    // no --intent, no plan: the session's reasons claim neither
    expect(JSON.stringify(pending)).toContain("echo-asks");
    expect(JSON.stringify(pending)).not.toContain("within the intent");
    const approved = await runCli(["approve", pending.id], { env, now: new Date() });
    expect(approved.code).toBe(0);
    const result = await call;
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.content)).toContain("hello from the agent");
  });

  it("returns a denial to the agent when a person denies with `acp deny`", async () => {
    const call = client.callTool({ name: "echo", arguments: { message: "second" } }, undefined, { timeout: 60_000 });
    const pending = await waitForPending(env);
    expect((await runCli(["deny", pending.id, "--reason", "not today"], { env, now: new Date() })).code).toBe(0);
    const result = await call;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("not today");
  });

  it("leaves a verifiable audit chain whose approval carries a proof signed by the home's key", async () => {
    const verify = await runCli(["audit", "verify"], { env });
    expect(verify.code).toBe(0);
    const events = auditEvents(home);
    const types = events.map((e) => e.event_type);
    for (const t of [
      "tool_call_intercepted",
      "policy_evaluated",
      "consent_requested",
      "consent_approved",
      "consent_denied",
      "tool_call_forwarded",
      "tool_call_completed",
    ]) {
      expect(types).toContain(t);
    }
    const approval = events.find((e) => e.event_type === "consent_approved");
    const response = approval?.metadata["consent_response"] as ConsentResponseV02;
    const publicKey = readFileSync(join(home, "keys/public.key"), "utf8").trim();
    const action = { server: "everything", tool: "echo", parameters: { message: "hello from the agent" } };
    const proof = checkConsentProof(response, {
      expectedAction: action,
      trustedPublicKey: publicKey,
      now: new Date(response.timestamp),
    });
    expect(proof.ok).toBe(true);
    const forged = checkConsentProof(response, {
      expectedAction: { ...action, parameters: { message: "something else" } },
      trustedPublicKey: publicKey,
      now: new Date(response.timestamp),
    });
    expect(forged.ok).toBe(false);
  });
});

describe("a proxy killed while a call waits: its request is not left for anyone to answer", () => {
  const root = tempRoot("proxy-orphan-e2e");
  afterAll(() => root.cleanup());

  function start(env: Record<string, string>): { client: Client; transport: StdioClientTransport } {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything"],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    return { client: new Client({ name: "orphan-agent", version: "1.0.0" }), transport };
  }

  function running(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  it("acp pending does not list it, acp approve and acp deny refuse it, and the next proxy records it withdrawn", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "policy.yml"), POLICY);
    const env = envFor(home);
    const first = start(env);
    await first.client.connect(first.transport);
    const call = first.client
      .callTool({ name: "echo", arguments: { message: "left waiting" } }, undefined, { timeout: 60_000 })
      .catch((err: unknown) => err);
    const pending = await waitForPending(env);
    const pid = first.transport.pid ?? 0;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, "SIGKILL");
    expect(await call).toBeInstanceOf(Error);
    while (running(pid)) await new Promise((r) => setTimeout(r, 20));

    const listed = await runCli(["pending", "--json"], { env, now: new Date() });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    expect(listed.stderr).toContain(`1 request not listed: the acp proxy that asked is no longer running`);
    expect(listed.stderr).toContain(`${pending.id} (pid ${pid} on `);

    for (const answer of [
      ["approve", pending.id],
      ["deny", pending.id, "--reason", "late"],
    ]) {
      const out = await runCli(answer, { env, now: new Date() });
      expect(out.code).toBe(3);
      expect(out.stderr).toContain(`consent request \`${pending.id}\` cannot be answered`);
      expect(out.stderr).toContain(`(pid ${pid} on `);
      expect(out.stderr).toContain("is no longer running");
    }

    // a proxy that starts settles it: withdrawn, audited as the withdrawal of that request
    const second = start(env);
    await second.client.connect(second.transport);
    await second.client.close();
    const withdrawn = readFileSync(join(home, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as {
            event_type: string;
            request_id: string | null;
            decision: string | null;
            metadata: Record<string, unknown>;
          },
      )
      .filter((e) => e.event_type === "consent_withdrawn" && e.request_id === pending.id);
    expect(withdrawn).toHaveLength(1);
    expect(withdrawn[0]).toMatchObject({ decision: "withdrawn", metadata: { orphaned: true, owner_pid: pid } });
    expect(String(withdrawn[0]?.metadata["reason"])).toContain("stopped before an answer came");
    const after = await runCli(["pending", "--json"], { env, now: new Date() });
    expect(JSON.parse(after.stdout)).toEqual([]);
    expect(after.stderr).toBe("");
    // settled, it reads as any withdrawn request does
    const late = await runCli(["approve", pending.id], { env, now: new Date() });
    expect(late.code).toBe(3);
    expect(late.stderr).toContain("was already withdrawn");
  }, 120_000);
});
