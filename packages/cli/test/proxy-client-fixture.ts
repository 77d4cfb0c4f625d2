import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** The repository root, the built `acp` and server-everything's stdio binary, for tests that spawn a real proxy. */
export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const ACP = join(ROOT, "packages/cli/bin/acp.js");
export const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");

/**
 * An MCP SDK client connected over stdio to a real `acp proxy` in `env` (PATH added), in front of
 * server-everything named `everything` unless `args` says otherwise (the arguments after `acp`).
 */
export async function connectProxy(
  env: Record<string, string>,
  options: { readonly name: string; readonly args?: readonly string[] },
): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ACP, ...(options.args ?? ["proxy", "--upstream", EVERYTHING, "--name", "everything"])],
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: options.name, version: "1.0.0" });
  await client.connect(transport);
  return client;
}
