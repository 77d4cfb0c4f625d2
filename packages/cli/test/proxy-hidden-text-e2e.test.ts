import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { ROOT, connectProxy } from "./proxy-client-fixture.js";

const run = promisify(execFile);
const SMUGGLER = join(ROOT, "packages/proxy/test/fixtures/smuggling-server.mjs");

// every call is allowed by the policy: whatever asks below, the session runtime asked
const POLICY = 'version: "1"\ndefault_action: allow\n';
// `smuggle` reads (words hidden in tag characters); `fail` stands for a consequential call (a write)
const SESSION = `
session:
  escalate_after_instructions: true
  classify:
    - { tool: smuggle, category: read }
    - { tool: fail, category: write }
`;

async function waitForPending(env: Record<string, string>): Promise<{ id: string; tool: string }[]> {
  for (let i = 0; i < 400; i++) {
    const rows = JSON.parse((await runCli(["pending", "--json"], { env, now: new Date() })).stdout || "[]") as {
      id: string;
      tool: string;
    }[];
    if (rows.length > 0) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no pending request appeared");
}

/** `acp proxy` in a fresh home in front of the smuggling fixture, with an agent's SDK client connected. */
function smugglerProxy(name: string): { env: () => Record<string, string>; client: () => Client } {
  const root = tempRoot(name);
  let env: Record<string, string> = {};
  let client: Client | undefined;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/session-config.js"))) {
      await run("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "policy.yml"), POLICY);
    const file = join(home, "config.yml");
    const text = readFileSync(file, "utf8").replace(/^session:\n(?:(?:[ #].*)?\n)*/m, "");
    writeFileSync(file, `${text}${SESSION}`);
    env = envFor(home);
    client = await connectProxy(env, {
      name: "hidden-text-agent",
      args: ["proxy", "--upstream", `${process.execPath} ${SMUGGLER}`, "--name", "smuggler"],
    });
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    root.cleanup();
  });

  return {
    env: () => env,
    client: () => {
      if (client === undefined) throw new Error("the proxy did not start");
      return client;
    },
  };
}

/** Asserts a consequential call (`fail`) waits for a person, the pending request naming `source`; denies it. */
async function expectWriteAsked(env: Record<string, string>, client: Client, source: string): Promise<void> {
  const call = client.callTool({ name: "fail", arguments: {} }, undefined, { timeout: 60_000 }).then(
    (r) => r,
    (err: unknown) => err,
  );
  const [pending] = await waitForPending(env);
  expect(pending?.tool).toBe("fail");
  const shown = await runCli(["pending"], { env, now: new Date() });
  expect(shown.stdout).toContain(source);
  expect((await runCli(["deny", pending?.id ?? "", "--reason", "not now"], { env, now: new Date() })).code).toBe(0);
  expect(await call).toMatchObject({ isError: true });
}

// `acp proxy` takes hidden text out of a result before the agent reads it; the session runtime is told it was
// there, so the result counts as instruction-like content read, and a later consequential call asks.
describe("acp proxy: a result that smuggled hidden text marks the session", () => {
  const proxy = smugglerProxy("proxy-hidden-text");

  it("asks for a consequential call after the hidden text was read, naming the tool it came from", async () => {
    const smuggled = await proxy.client().callTool({ name: "smuggle", arguments: {} });
    expect(smuggled._meta?.["acp/hidden_text_removed"]).toBe(49);
    await expectWriteAsked(proxy.env(), proxy.client(), "smuggler.smuggle");
  });
});

// So does a prompt (as a resource, a completion's values, a log line, a sampling request) that smuggled it.
describe("acp proxy: a prompt that smuggled hidden text marks the session", () => {
  const proxy = smugglerProxy("proxy-hidden-prompt");

  it("asks for a consequential call after the prompt was read, naming smuggler.prompts/get", async () => {
    const prompt = await proxy.client().getPrompt({ name: "brief" });
    expect(prompt._meta?.["acp/hidden_text_removed"]).toBe(24);
    await expectWriteAsked(proxy.env(), proxy.client(), "smuggler.prompts/get");
  });
});
