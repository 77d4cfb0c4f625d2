/** A schema as the MCP SDK's are (zod): what a check of one item needs of it. */
export interface ItemSchema {
  safeParse(
    value: unknown,
  ):
    { readonly success: true } | { readonly success: false; readonly error: { readonly issues: readonly ItemIssue[] } };
}

interface ItemIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * Why an item an upstream listed (a tool, prompt, resource or resource template) cannot be served as it is,
 * or undefined when it can: `schema` (the MCP SDK's schema of such an item) refuses it, or it is valid JSON
 * nested too deep for `JSON.stringify` to write again. The agent's client checks a listing as a whole, so one
 * such item served would cost the agent the whole listing, every server's items with it. The reason names
 * the item by its member `key` (`name`, `uri`, `uriTemplate`) as JSON cut at 80 characters, then the first issue.
 */
export function refusedItem(value: unknown, schema: ItemSchema, key: string): string | undefined {
  const raw = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  const shown = typeof raw === "string" ? refusedItemName(raw) : `(no ${key})`;
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "" : `${issue.path.map(String).join(".")}: `;
    return `${shown} (${where}${issue?.message ?? "refused by the MCP schema"})`;
  }
  try {
    JSON.stringify(value);
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ");
    return `${shown} (it cannot be written as JSON: ${why})`;
  }
  return undefined;
}

/** `1 tool is not served: …`: what a listing left out, the first five named. */
export function describeRefused(kind: string, refused: readonly string[]): string {
  const count = refused.length === 1 ? `1 ${kind} is` : `${refused.length} ${kind}s are`;
  return `${count} not served: ${refused.slice(0, 5).join("; ")}${refused.length > 5 ? "; …" : ""}`;
}

/** A listed item's name or URI as a reason shows it: JSON, cut at 80 characters. */
export function refusedItemName(name: string): string {
  return JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
}
