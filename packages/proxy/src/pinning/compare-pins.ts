import { canonicalJsonBytes, foldName, sha256Ref } from "@acp/core";
import type { ToolPin } from "./pin-store.js";

/**
 * An MCP tool definition as an upstream lists it: `name` plus everything else it says (`description`,
 * `title`, `inputSchema`, `outputSchema`, `annotations`, `_meta`, …). Every field but `name` is pinned.
 */
export interface PinnableTool {
  readonly name: string;
  readonly [field: string]: unknown;
}

/** A tool whose definition differs from its pin. */
export interface ToolChange {
  readonly tool: string;
  readonly before: ToolPin;
  readonly after: ToolPin;
  /**
   * Which parts changed: `description`, `input_schema`, `output_schema`, `title`, `annotations`, `_meta`,
   * or the name of any other field of the definition; `name` first when the tool is new but its name passes
   * for a pinned one's (`before` is that tool's pin: see {@link comparePins}).
   */
  readonly fields: readonly string[];
}

/**
 * The largest definition (canonical JSON of every field but `name`, in bytes) whose values are kept in the
 * pin. A larger one is pinned by its hashes only; while such a tool is held its agent is served a stand-in
 * (see {@link pinnedDefinition}).
 */
export const MAX_PINNED_DEFINITION_BYTES = 64 * 1024;

/** The stored form of a value: the canonical JSON bytes, or (for what has none) a cruder stable form. */
function bytesOf(value: unknown): Uint8Array {
  try {
    return canonicalJsonBytes(value);
  } catch {
    // a value that cannot be put in canonical form still gets a stable (if cruder) fingerprint
    return canonicalJsonBytes(JSON.stringify(value) ?? null);
  }
}

/** The definition of a tool without its name. */
function definitionOf(tool: PinnableTool): Record<string, unknown> {
  const { name: _name, ...rest } = tool;
  void _name;
  return rest;
}

/** Builds the pin of a tool definition as seen now. */
export function pinTool(tool: PinnableTool, now: Date): ToolPin {
  const definition = definitionOf(tool);
  // built with fromEntries: a field named `__proto__` is a field like any other (an assignment would drop it)
  const fieldHashes: Record<string, string> = Object.fromEntries(
    Object.keys(definition)
      .sort()
      .filter((key) => definition[key] !== undefined)
      .map((key) => [key, sha256Ref(bytesOf(definition[key]))]),
  );
  const kept = bytesOf(definition).length <= MAX_PINNED_DEFINITION_BYTES;
  return {
    name: tool.name,
    description: typeof tool["description"] === "string" ? tool["description"] : null,
    input_schema_hash: sha256Ref(bytesOf(tool["inputSchema"] ?? null)),
    field_hashes: fieldHashes,
    ...(kept ? { definition: JSON.parse(JSON.stringify(definition)) as Record<string, unknown> } : {}),
    pinned_at: now.toISOString(),
  };
}

/** How a field of the definition is named in a change (`inputSchema` → `input_schema`, as before). */
function fieldName(key: string): string {
  if (key === "inputSchema") return "input_schema";
  if (key === "outputSchema") return "output_schema";
  return key;
}

/** The field hashes of a pin, or undefined for a pin written before every field was pinned (or malformed). */
function fieldHashesOf(pin: ToolPin): Readonly<Record<string, string>> | undefined {
  const hashes: unknown = pin.field_hashes;
  if (typeof hashes !== "object" || hashes === null || Array.isArray(hashes)) return undefined;
  return Object.values(hashes).every((h) => typeof h === "string") ? (hashes as Record<string, string>) : undefined;
}

/**
 * The fields in which `after` (a pin of the definition as listed now) differs from the pin `before`. A pin
 * written before every field was pinned (description and input-schema hash only) is compared on those two.
 */
export function changedFields(before: ToolPin, after: ToolPin): readonly string[] {
  const was = fieldHashesOf(before);
  if (was === undefined) {
    const fields: string[] = [];
    if (before.description !== after.description) fields.push("description");
    if (before.input_schema_hash !== after.input_schema_hash) fields.push("input_schema");
    return fields;
  }
  const now = after.field_hashes ?? {};
  const keys = [...new Set([...Object.keys(was), ...Object.keys(now)])].sort();
  return keys.filter((key) => was[key] !== now[key]).map(fieldName);
}

/** Whether a pin was written before every field was pinned (it gets them on first sight, if it matches). */
export function isOldPin(pin: ToolPin): boolean {
  return fieldHashesOf(pin) === undefined;
}

/**
 * Compares a server's listing with its pins: tools never seen become new pins (recorded); tools whose
 * definition differs in any field are changes (held behind `ask` until a person accepts them); tools whose
 * old-format pin (description and input-schema hash only) still matches are upgraded: every field is
 * recorded as seen now, which is not a change.
 *
 * A tool never seen whose name differs from a pinned tool's only as a person reads past (case, or a look-alike:
 * `Read_File`, `read_fi1e`, `read_fiIe` beside a pinned `read_file`; {@link foldName}) is no new tool but a
 * change of that one (`name` first in its fields, `before` the pin it passes for): a server that renames a
 * pinned tool so, with a new description, would otherwise have it pinned unseen as a new tool, while a person
 * takes it for the one they know.
 */
export function comparePins(
  pins: ReadonlyMap<string, ToolPin>,
  tools: readonly PinnableTool[],
  now: Date,
): {
  readonly fresh: readonly ToolPin[];
  readonly changes: readonly ToolChange[];
  readonly upgraded: readonly ToolPin[];
} {
  const fresh: ToolPin[] = [];
  const changes: ToolChange[] = [];
  const upgraded: ToolPin[] = [];
  let byFold: Map<string, ToolPin> | undefined;
  for (const tool of tools) {
    const after = pinTool(tool, now);
    const before = pins.get(tool.name);
    if (before === undefined) {
      byFold ??= foldsOf(pins);
      const passesFor = readings(tool.name)
        .map((fold) => byFold?.get(fold))
        .find((pin) => pin !== undefined);
      if (passesFor !== undefined) {
        changes.push({
          tool: tool.name,
          before: passesFor,
          after,
          fields: ["name", ...changedFields(passesFor, after)],
        });
      } else fresh.push(after);
      continue;
    }
    const fields = changedFields(before, after);
    if (fields.length > 0) changes.push({ tool: tool.name, before, after, fields });
    else if (isOldPin(before)) upgraded.push({ ...after, pinned_at: before.pinned_at });
  }
  return { fresh, changes, upgraded };
}

/**
 * How a person may read a tool's name: its {@link foldName} (any case, look-alikes: `read_fi1e` is
 * `read_file`), and the same with each capital `I` read as the `l` it looks like (`read_fiIe`), which the
 * fold, lower-casing first, reads as `i`.
 */
function readings(name: string): string[] {
  const folds = [foldName(name)];
  if (name.includes("I")) folds.push(foldName(name.replace(/I/g, "l")));
  return folds;
}

/** The pins by each reading of their name (the first pinned of each). */
function foldsOf(pins: ReadonlyMap<string, ToolPin>): Map<string, ToolPin> {
  const out = new Map<string, ToolPin>();
  for (const pin of pins.values()) {
    for (const fold of readings(pin.name)) if (!out.has(fold)) out.set(fold, pin);
  }
  return out;
}

/** What a held tool whose pin kept no values (too large, or an old-format pin) has as its input schema. */
const STAND_IN_SCHEMA = { type: "object" } as const;

/**
 * The definition a held tool is served and decided with: every field as pinned. A pin that kept no values
 * (a definition over {@link MAX_PINNED_DEFINITION_BYTES}, or an old-format pin) gives a stand-in: the pinned
 * description (if any), an input schema `{"type": "object"}`, and nothing else (no annotations) — never the
 * new text.
 */
export function pinnedDefinition(pin: ToolPin): PinnableTool {
  const kept: unknown = pin.definition;
  if (typeof kept === "object" && kept !== null && !Array.isArray(kept)) {
    return { ...(kept as Record<string, unknown>), name: pin.name };
  }
  return {
    name: pin.name,
    ...(typeof pin.description === "string" ? { description: pin.description } : {}),
    inputSchema: STAND_IN_SCHEMA,
  };
}
