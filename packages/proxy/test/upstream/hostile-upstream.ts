import { fileURLToPath } from "node:url";
import type { UpstreamSpec } from "../../src/index.js";

/**
 * The hostile fixture upstream (`fixtures/hostile-server.mjs`: raw JSON-RPC lines; each tool misbehaves one
 * way), under `name`; `tools`, when given, is its listing instead of its own tools; `env` sets its other
 * switches (`HOSTILE_DEEP_TOOL`, `HOSTILE_PROMPTS`, `HOSTILE_RESOURCES`).
 */
export function hostile(name = "hostile", tools?: readonly unknown[], env: Record<string, string> = {}): UpstreamSpec {
  const all = { ...(tools !== undefined ? { HOSTILE_TOOLS: JSON.stringify(tools) } : {}), ...env };
  return {
    name,
    transport: "stdio",
    command: process.execPath,
    args: [fileURLToPath(new URL("../fixtures/hostile-server.mjs", import.meta.url))],
    ...(Object.keys(all).length > 0 ? { env: all } : {}),
  };
}
