import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");

async function waitForPending(env: Record<string, string>): Promise<{ id: string; tool: string }> {
  for (let i = 0; i < 400; i++) {
    const rows = JSON.parse((await runCli(["pending", "--json"], { env, now: new Date() })).stdout || "[]") as {
      id: string;
      tool: string;
    }[];
    if (rows[0] !== undefined) return rows[0];
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no pending request appeared");
}

function text(result: unknown): string {
  return JSON.stringify((result as { content?: unknown }).content);
}

describe("acp_submit_plan: the agent proposes, a person approves, the runtime enforces", () => {
  const root = tempRoot("proxy-plan");
  let env: Record<string, string> = {};
  let client: Client;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/proxy/dist/proxy-server/submit-plan.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    const { home } = fixtureHome(root.dir);
    env = envFor(home);
    writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\n');
    const intent = join(root.dir, "intent.yml");
    writeFileSync(
      intent,
      'goal: echo things back\nallowed_actions: ["everything.echo", "everything.get-sum"]\nforbidden_actions: ["everything.get-env"]\n',
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything", "--intent", intent],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    client = new Client({ name: "plan-agent", version: "1.0.0" });
    await client.connect(transport);
  }, 120_000);

  afterAll(async () => {
    await client.close();
    root.cleanup();
  });

  it("offers the tool and refuses a plan that leaves the intent, without asking anyone", async () => {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("acp_submit_plan");
    const result = await client.callTool({
      name: "acp_submit_plan",
      arguments: { plan: { steps: [{ action: "everything.get-env" }] } },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("does not fit the intent");
  });

  it("puts a fitting plan that names a value nobody named before a person; once approved, only its steps run", async () => {
    // a plan that only narrows the intent is approved by rule (docs/guides/intents.md); this one pins a value
    // the person never named, so a person is asked
    const plan = { steps: [{ action: "everything.echo", constraints: { message: { exact: "in plan" } } }] };
    const submit = client.callTool({ name: "acp_submit_plan", arguments: { plan } }, undefined, { timeout: 60_000 });
    const pending = await waitForPending(env);
    expect(pending.tool).toBe("acp_submit_plan");
    expect((await runCli(["approve", pending.id], { env, now: new Date() })).code).toBe(0);
    const approved = await submit;
    expect(approved.isError).not.toBe(true);
    const echo = await client.callTool({ name: "echo", arguments: { message: "in plan" } });
    expect(text(echo)).toContain("in plan");
    const sum = await client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
    expect(sum.isError).toBe(true);
  });
});
