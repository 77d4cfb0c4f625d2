import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { MAX_METADATA_DEPTH } from "@acp/core";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

/**
 * An agent chooses its arguments. A lone surrogate (`"\ud800"`: valid JSON text, refused by the audit chain's
 * canonical form) or arguments nested deeper than the chain takes used to make an event nobody could
 * record: the audit log stopped, and `acp proxy` refused that call and every later one. Now the audit
 * records them (U+FFFD; the deep part as its length and digest), the pipeline refuses both calls as bad
 * input (only them), and the proxy goes on.
 */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const run = promisify(execFile);

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

describe("acp proxy: arguments the audit chain cannot hold as they are (built CLI, server-everything)", () => {
  const root = tempRoot("proxy-hostile-args");
  let home = "";
  let env: Record<string, string> = {};
  let client: Client;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/audit-sink.js"))) {
      await run("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    ({ home } = fixtureHome(root.dir));
    env = envFor(home);
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: deny\nrules:\n  - id: echo\n    match: { tool: echo }\n    action: allow\n',
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "-n", "everything"],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    client = new Client({ name: "hostile-agent", version: "1.0.0" });
    await client.connect(transport);
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    root.cleanup();
  });

  it("records them, decides them, and every later call still runs; the chain verifies", async () => {
    // not I-JSON: no consent proof could hold it, so it is refused as bad input (and only it)
    const surrogate = await client.callTool({ name: "echo", arguments: { message: "bad \ud800 x" } });
    expect(surrogate.isError).toBe(true);
    expect(textOf(surrogate)).toMatch(/invalid request: .*an argument string holds a lone surrogate/);

    let deep: unknown = "bottom";
    for (let i = 0; i < 200; i++) deep = [deep];
    const nested = await client.callTool({ name: "echo", arguments: { message: "nested", deep } });
    // the pipeline refuses a request nested that deep (bad input), and says why: only this call
    expect(nested.isError).toBe(true);
    expect(textOf(nested)).toMatch(/refused by the decision pipeline: invalid request: .*nest deeper than 64/);

    const after = await client.callTool({ name: "echo", arguments: { message: "after" } });
    expect(after.isError).not.toBe(true);
    expect(textOf(after)).toBe("Echo: after");
    await client.close();

    const verify = await runCli(["audit", "verify"], { env });
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
    const events = readFileSync(join(home, "audit.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { event_type: string; metadata: { arguments?: Record<string, unknown> } });
    const intercepted = events.filter((e) => e.event_type === "tool_call_intercepted");
    expect(intercepted.map((e) => e.metadata.arguments?.["message"])).toEqual(["bad \ufffd x", "nested", "after"]);
    expect(JSON.stringify(intercepted[1]?.metadata.arguments?.["deep"])).toContain(
      `omitted from the audit: nested deeper than ${MAX_METADATA_DEPTH} levels`,
    );
    expect(events.filter((e) => e.event_type === "tool_call_completed")).toHaveLength(1);
    const decided = events.filter((e) => e.event_type === "policy_evaluated") as unknown as { decision: string }[];
    expect(decided.map((e) => e.decision)).toEqual(["refuse", "refuse", "accept"]);
  }, 60_000);
});
