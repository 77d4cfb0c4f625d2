import { fileURLToPath } from "node:url";
import type { UpstreamSpec } from "../../src/index.js";

/**
 * The hostile fixture upstream (`fixtures/hostile-server.mjs`: raw JSON-RPC lines; each tool misbehaves one
 * way), under `name`; `tools`, when given, is its listing instead of its own tools.
 */
export function hostile(name = "hostile", tools?: readonly unknown[]): UpstreamSpec {
  return {
    name,
    transport: "stdio",
    command: process.execPath,
    args: [fileURLToPath(new URL("../fixtures/hostile-server.mjs", import.meta.url))],
    ...(tools !== undefined ? { env: { HOSTILE_TOOLS: JSON.stringify(tools) } } : {}),
  };
}
