import { canonicalSha256Ref } from "@acp/core";
import type { ToolPin } from "./pin-store.js";

/** The parts of an MCP tool definition that pinning looks at. */
export interface PinnableTool {
  readonly name: string;
  readonly description?: unknown;
  readonly inputSchema?: unknown;
}

/** A tool whose definition differs from its pin. */
export interface ToolChange {
  readonly tool: string;
  readonly before: ToolPin;
  readonly after: ToolPin;
  /** Which parts changed: `description`, `input_schema`. */
  readonly fields: readonly ("description" | "input_schema")[];
}

/** Builds the pin of a tool definition as seen now. */
export function pinTool(tool: PinnableTool, now: Date): ToolPin {
  let hash: string;
  try {
    hash = canonicalSha256Ref(tool.inputSchema ?? null);
  } catch {
    // A schema that cannot be put in canonical form still gets a stable (if cruder) fingerprint.
    hash = canonicalSha256Ref(JSON.stringify(tool.inputSchema ?? null));
  }
  return {
    name: tool.name,
    description: typeof tool.description === "string" ? tool.description : null,
    input_schema_hash: hash,
    pinned_at: now.toISOString(),
  };
}

/**
 * Compares a server's listing with its pins: tools never seen become new pins (recorded); tools whose
 * description or input schema differ are changes (held behind `ask` until a person accepts them).
 */
export function comparePins(
  pins: ReadonlyMap<string, ToolPin>,
  tools: readonly PinnableTool[],
  now: Date,
): { readonly fresh: readonly ToolPin[]; readonly changes: readonly ToolChange[] } {
  const fresh: ToolPin[] = [];
  const changes: ToolChange[] = [];
  for (const tool of tools) {
    const after = pinTool(tool, now);
    const before = pins.get(tool.name);
    if (before === undefined) {
      fresh.push(after);
      continue;
    }
    const fields: ("description" | "input_schema")[] = [];
    if (before.description !== after.description) fields.push("description");
    if (before.input_schema_hash !== after.input_schema_hash) fields.push("input_schema");
    if (fields.length > 0) changes.push({ tool: tool.name, before, after, fields });
  }
  return { fresh, changes };
}
