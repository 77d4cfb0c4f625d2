import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const ACP = join(REPO, "packages/cli/bin/acp.js");
const EVERYTHING = join(REPO, "node_modules/.bin/mcp-server-everything");
const HINT = "acp proxy: serving MCP on stdin/stdout, which an MCP client speaks";
const root = tempRoot("proxy-tty-hint");
afterAll(root.cleanup);

/** util-linux `script` gives the command a terminal as stdin, as a person typing `acp proxy …` has. */
const hasScript = spawnSync("script", ["--version"]).status === 0;

function env(): NodeJS.ProcessEnv {
  return { ...envFor(fixtureHome(root.dir).home), PATH: process.env["PATH"] ?? "" };
}

/** Runs `acp ARGS` under script(1), with a terminal as stdin, until it prints "Ctrl-C stops"; what it printed. */
async function atATerminal(args: string): Promise<string> {
  const command = `'${process.execPath}' '${ACP}' ${args}`;
  const child = spawn("script", ["-qec", command, "/dev/null"], { env: env(), stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("Ctrl-C stops")) resolve();
    });
    child.on("exit", () => reject(new Error(`exited before the hint:\n${out}`)));
  });
  child.kill("SIGTERM");
  return out;
}

describe("acp proxy on stdio says what it waits for when a person runs it at a terminal", () => {
  it.skipIf(!hasScript)("at a terminal: the hint names the MCP client config and --http", async () => {
    const out = await atATerminal(`proxy --upstream '${EVERYTHING}'`);
    expect(out).toContain(`${HINT}: put this command in the client's config ("mcpServers", \`acp docs guides/proxy\`)`);
    expect(out).toContain("or serve HTTP with --http PORT");
  });

  it("started by a client (stdin a pipe): no hint, stdout stays MCP", () => {
    const out = spawnSync(process.execPath, [ACP, "proxy", "--upstream", EVERYTHING], {
      env: env(),
      input: "",
      encoding: "utf8",
    });
    expect(out.status).toBe(0);
    expect(out.stderr).toContain("upstream `mcp-server-everything`: connected");
    expect(out.stderr).not.toContain(HINT);
    // stdout carries MCP only (the upstream may announce list changes): every line a JSON-RPC message
    for (const line of out.stdout.split("\n").filter((l) => l !== ""))
      expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
  });
});

describe("acp serve --stdio says what it waits for when a person runs it at a terminal", () => {
  it.skipIf(!hasScript)("at a terminal: the hint names the MCP tool, the client config and HTTP", async () => {
    const out = await atATerminal("serve --stdio");
    expect(out).toContain(
      "acp serve: serving the MCP tool aana_pre_tool_check on stdin/stdout, which an MCP client speaks: put this " +
        "command in the client's config (`acp docs guides/serve`), or run acp serve without --stdio for HTTP",
    );
  });

  it("started by a client (stdin a pipe): no hint", () => {
    const out = spawnSync(process.execPath, [ACP, "serve", "--stdio"], { env: env(), input: "", encoding: "utf8" });
    expect(out.status).toBe(0);
    expect(out.stderr).not.toContain("which an MCP client speaks");
    expect(out.stdout).toBe("");
  });
});
