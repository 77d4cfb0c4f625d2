/**
 * The MCP client config snippets of README.md, docs/guides/proxy.md and docs/guides/serve.md, run as a client
 * runs them: the official SDK client spawns exactly the snippet's command and args, with the snippet's env
 * (its passphrase placeholder filled in) and the test home. `acp` is found on PATH, as after
 * `npm install -g ./packages/cli`.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "./home-fixture.js";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const PLACEHOLDER = "the passphrase you gave acp init";
const root = tempRoot("docs-snippets");
/** Directories made outside `root`: the shim's, and those under /tmp (the filesystem server of the snippets serves /tmp). */
const made: string[] = [];
afterAll(() => {
  root.cleanup();
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

interface ServerEntry {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/** The JSON code blocks of a doc that hold `needle`, parsed (a bare `"name": {…}` entry is wrapped in braces). */
function jsonBlocks(doc: string, needle: string): unknown[] {
  const text = readFileSync(join(REPO, doc), "utf8");
  return [...text.matchAll(/```json\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? "")
    .filter((block) => block.includes(needle))
    .map((block) => JSON.parse(block.trim().startsWith("{") ? block : `{${block}}`) as unknown);
}

/** A directory with an `acp` that runs this checkout's CLI, for PATH. */
function acpOnPath(): string {
  const bin = mkdtempSync(join(tmpdir(), "acp-bin-"));
  made.push(bin);
  const shim = join(bin, "acp");
  writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${join(REPO, "packages/cli/bin/acp.js")}' "$@"\n`);
  chmodSync(shim, 0o755);
  return bin;
}
const BIN = acpOnPath();

/** Connects the SDK client to the snippet's server, run in `home` from the repository root. */
async function connect(entry: ServerEntry, home: string): Promise<Client> {
  const env: Record<string, string> = { ACP_HOME: home, PATH: `${BIN}:${process.env["PATH"] ?? ""}` };
  for (const [key, value] of Object.entries(entry.env ?? {})) env[key] = value === PLACEHOLDER ? PASSPHRASE : value;
  const transport = new StdioClientTransport({
    command: entry.command,
    args: [...entry.args],
    env,
    cwd: REPO,
    stderr: "ignore",
  });
  const client = new Client({ name: "docs-snippet", version: "0" });
  await client.connect(transport);
  return client;
}

/** The first consent request waiting in `home`, as `acp pending --json` lists it. */
async function firstPending(home: string): Promise<string> {
  for (;;) {
    const listed = JSON.parse((await runCli(["pending", "--json"], { env: envFor(home), now: new Date() })).stdout) as {
      id: string;
    }[];
    if (listed[0] !== undefined) return listed[0].id;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const proxySnippets = [
  ...jsonBlocks("README.md", "mcpServers").map((s) => ["README.md", s] as const),
  ...jsonBlocks("docs/guides/proxy.md", '"command": "acp"').map((s) => ["docs/guides/proxy.md", s] as const),
];

describe("the mcpServers snippet of the docs works as written", () => {
  it("README.md and the proxy guide each show one", () => {
    expect(proxySnippets.map(([doc]) => doc)).toEqual(["README.md", "docs/guides/proxy.md"]);
  });

  it.each(proxySnippets)(
    "%s: reads pass, a write asks and runs once approved with acp approve",
    async (_doc, snippet) => {
      const servers = (snippet as { mcpServers: Record<string, ServerEntry> }).mcpServers;
      const entry = Object.values(servers)[0];
      if (entry === undefined) throw new Error("no server in the snippet");
      expect(entry.command).toBe("acp");
      const { home } = fixtureHome(root.dir);
      const dir = mkdtempSync(join("/tmp", "acp-snippet-"));
      made.push(dir);
      writeFileSync(join(dir, "note.txt"), "hello");
      const client = await connect(entry, home);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toContain("read_text_file");
        const read = await client.callTool({ name: "read_text_file", arguments: { path: join(dir, "note.txt") } });
        expect(read.isError).not.toBe(true);
        expect(JSON.stringify(read.content)).toContain("hello");
        const write = client.callTool({ name: "write_file", arguments: { path: join(dir, "out.txt"), content: "x" } });
        const approved = await runCli(["approve", await firstPending(home)], { env: envFor(home), now: new Date() });
        expect(approved.code).toBe(0);
        expect((await write).isError).not.toBe(true);
        expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe("x");
      } finally {
        await client.close();
      }
    },
  );

  it("docs/guides/serve.md: acp serve --stdio answers aana_pre_tool_check", async () => {
    const [snippet] = jsonBlocks("docs/guides/serve.md", '"acp-gate"');
    const entry = (snippet as Record<string, ServerEntry>)["acp-gate"];
    if (entry === undefined) throw new Error("no acp-gate entry in the serve guide");
    const { home } = fixtureHome(root.dir);
    const client = await connect(entry, home);
    try {
      const event = JSON.parse(
        readFileSync(join(REPO, "examples/policy-tour/send-email.contract.json"), "utf8"),
      ) as Record<string, unknown>;
      const result = await client.callTool({ name: "aana_pre_tool_check", arguments: event });
      expect(result.structuredContent).toMatchObject({ route: "ask" });
    } finally {
      await client.close();
    }
  });
});
