import { execFile } from "node:child_process";
import { copyFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

/**
 * The consent graph's `graph:` section (mapping, threshold) comes from the config file in use like every
 * other key: `--config FILE`'s section places calls in the home's consent graph, the home's config.yml's
 * section does not matter then (and does without `--config`). The graph itself stays the home's.
 */

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const run = promisify(execFile);
const BLOCKED = "graph:email.send_to_unknown";

/** A `graph:` section mapping `tool` onto `email.send_to_unknown`, which the example graph blocks. */
const blocking = (tool: string): string =>
  `version: "1"\ngraph:\n  threshold: 0.9\n  mapping:\n    - { tool: ${tool}, domain: email, action: send_to_unknown }\n`;

function proxyArgs(config: string | null): string[] {
  return [ACP, "proxy", ...(config !== null ? ["--config", config] : []), "--upstream", EVERYTHING, "-n", "everything"];
}

const stderrOf = new WeakMap<Client, { text: string }>();

async function connect(env: Record<string, string>, config: string | null): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: proxyArgs(config),
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stderr: "pipe",
  });
  const stderr = { text: "" };
  transport.stderr?.on("data", (chunk: Buffer) => (stderr.text += chunk.toString("utf8")));
  const client = new Client({ name: "graph-config-agent", version: "1.0.0" });
  await client.connect(transport);
  stderrOf.set(client, stderr);
  return client;
}

/** Calls `echo` and `get-sum`; for each, the rule that refused it, or `accepted`. */
async function outcomes(client: Client): Promise<{ echo: string; sum: string }> {
  const outcome = (result: Awaited<ReturnType<Client["callTool"]>>): string =>
    result.isError === true ? (/"rule":"([^"]+)"/.exec(JSON.stringify(result))?.[1] ?? "error") : "accepted";
  const echo = await client.callTool({ name: "echo", arguments: { message: "to mark@attacker.example" } });
  const sum = await client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
  return { echo: outcome(echo), sum: outcome(sum) };
}

describe("acp proxy: the `graph:` section comes from the config file in use", () => {
  const root = tempRoot("proxy-config-graph");
  let env: Record<string, string> = {};
  let home = "";
  let file = "";

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/config-in-use.js"))) {
      await run("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    ({ home } = fixtureHome(root.dir));
    env = envFor(home);
    copyFileSync(join(ROOT, "spec/examples/consent-graph.json"), join(home, "consent-graph.json"));
    // echo and get-sum are reads here: server-everything is not marked trusted, so their `readOnlyHint` is set
    // aside, and as writes the session runtime would judge them too (echo's address is in no result)
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: allow\nclassify:\n  - { tool: echo, category: read }\n  - { tool: get-sum, category: read }\n',
    );
    // the home's section blocks get-sum; FILE's blocks echo
    writeFileSync(join(home, "config.yml"), blocking("get-sum"));
    file = join(root.dir, "elsewhere.yml");
    writeFileSync(file, blocking("echo"));
  }, 120_000);

  afterAll(() => root.cleanup());

  it("under --config FILE, FILE's mapping places calls in the graph and the home's does not", async () => {
    const client = await connect(env, file);
    try {
      expect(await outcomes(client)).toEqual({ echo: BLOCKED, sum: "accepted" });
      // nothing to say about where the graph settings come from: the one rule
      expect(stderrOf.get(client)?.text).toContain("acp proxy: ");
      expect(stderrOf.get(client)?.text).not.toMatch(/graph/i);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("without --config, the home's config.yml's mapping is the one in use", async () => {
    const client = await connect(env, null);
    try {
      expect(await outcomes(client)).toEqual({ echo: "accepted", sum: BLOCKED });
    } finally {
      await client.close();
    }
  }, 60_000);

  it("a FILE without `graph:` leaves every call to the other sources, whatever the home's section says", async () => {
    const plain = join(root.dir, "plain.yml");
    writeFileSync(plain, 'version: "1"\n');
    const client = await connect(env, plain);
    try {
      expect(await outcomes(client)).toEqual({ echo: "accepted", sum: "accepted" });
    } finally {
      await client.close();
    }
  }, 60_000);

  it("bad `graph:` values in FILE stop the proxy with exit 4, each at FILE:LINE:COL; the home's are not read", async () => {
    writeFileSync(join(home, "config.yml"), 'version: "1"\ngraph:\n  threshold: 7\n');
    const bad = join(root.dir, "bad-graph.yml");
    writeFileSync(
      bad,
      'version: "1"\ngraph:\n  threshold: 2\n  mapping:\n    - { tool: echo, domian: email, action: send }\n',
    );
    const failed = await run(process.execPath, proxyArgs(bad), {
      env: { PATH: process.env["PATH"] ?? "", ...env },
      timeout: 60_000,
    }).then(
      () => ({ code: 0, stderr: "" }),
      (err: { code?: number; stderr?: string }) => ({ code: err.code, stderr: err.stderr ?? "" }),
    );
    expect(failed.code).toBe(4);
    expect(failed.stderr).toContain(`${bad}:3:14: \`graph.threshold\` must be a number from 0 to 1`);
    expect(failed.stderr).toMatch(new RegExp(`${bad}:5:\\d+: unknown key \`domian\``));
    expect(failed.stderr).not.toContain(join(home, "config.yml"));
  }, 60_000);
});
