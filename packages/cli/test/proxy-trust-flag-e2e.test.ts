/**
 * `acp proxy --trust NAME`: an upstream wrapped on the command line (no config file) can be marked trusted, as
 * `trusted: true` in proxy.upstream_servers marks one. server-everything marks `echo` read-only; from an
 * untrusted server that claim is set aside, so under a policy that asks for anything but reads `echo` asks
 * (here, with no home and no terminal, that ask is refused saying so). With `--trust everything` it is a read
 * and runs. A `--trust` naming no upstream is a usage error that starts nothing.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ACP, EVERYTHING } from "./proxy-client-fixture.js";
import { tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const root = tempRoot("proxy-trust-flag");
afterAll(root.cleanup);

const policy = join(root.dir, "policy.yml");
writeFileSync(
  policy,
  'version: "1"\ndefault_action: ask\nrules:\n  - { id: allow-reads, match: { category: read }, action: allow }\n',
);
const env = { PATH: process.env["PATH"] ?? "", HOME: root.dir, ACP_HOME: join(root.dir, "no-home", ".acp") };

/** Calls `echo` through a real `acp proxy -u server-everything` with `extra` flags; its result and stderr. */
async function echoThrough(extra: readonly string[]): Promise<{ text: string; isError: boolean; stderr: string }> {
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything", "--policy", policy, ...extra],
    env,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => void stderr.push(chunk.toString("utf8")));
  const client = new Client({ name: "trust-flag-agent", version: "1.0.0" });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: "echo", arguments: { message: "hi" } });
    const text = (result.content as { type: string; text: string }[])[0]?.text ?? "";
    return { text, isError: result.isError === true, stderr: stderr.join("") };
  } finally {
    await client.close();
  }
}

describe("acp proxy --trust NAME", () => {
  it("without it, server-everything's readOnlyHint on echo is set aside: echo asks, and the start says how to trust", async () => {
    const r = await echoThrough([]);
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^consent not given: no consent channel is available/);
    expect(r.stderr).toMatch(/upstream `everything`: \d+ tools? marks? (itself|themselves) read-only \([^)]*`echo`/);
    expect(r.stderr).toContain("or start acp proxy with --trust everything");
  }, 60_000);

  it("with --trust everything, echo is a read: it runs under allow-reads, and nothing is said set aside", async () => {
    const r = await echoThrough(["--trust", "everything"]);
    expect(r.isError).toBe(false);
    expect(r.text).toBe("Echo: hi");
    expect(r.stderr).not.toContain("read-only (");
  }, 60_000);

  it("refuses a --trust that names no upstream (exit 2, naming the upstreams), before starting any", async () => {
    const r = await runCli(
      ["proxy", "-u", EVERYTHING, "-n", "everything", "--policy", policy, "--trust", "evrything"],
      {
        env,
      },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--trust `evrything` names no upstream (the upstreams: `everything`;");
  });
});
