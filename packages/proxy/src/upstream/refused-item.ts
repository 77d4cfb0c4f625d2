import { printable } from "@acp/core";

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
 * or its size (characters of JSON) when it can: `schema` (the MCP SDK's schema of such an item) refuses it,
 * or it is valid JSON nested too deep for `JSON.stringify` to write again. The agent's client checks a
 * listing as a whole, so one such item served would cost the agent the whole listing, every server's items
 * with it. The reason names the item by its member `key` (`name`, `uri`, `uriTemplate`), then the first issue.
 */
export function checkItem(
  value: unknown,
  schema: ItemSchema,
  key: string,
): { readonly why: string } | { readonly size: number } {
  const shown = itemName(value, key);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "" : `${issue.path.map(String).join(".")}: `;
    return { why: `${shown} (${where}${issue?.message ?? "refused by the MCP schema"})` };
  }
  try {
    return { size: JSON.stringify(value).length };
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ");
    return { why: `${shown} (it cannot be written as JSON: ${why})` };
  }
}

/**
 * The most characters of JSON the items of one upstream's listing (its tools; its prompts; …) may take
 * together: past it, what the server lists is not served and no further page is asked for. It bounds what
 * one server holds in the proxy's memory, and keeps the agent's `tools/list` answer writable (a listing
 * hundreds of megabytes long could not be written at all, and every server's tools were lost with it).
 */
export const MAX_LISTING_CHARS = 4 * 1024 * 1024;

/** The check of one upstream's listing, page by page: which items are served, and what is said of the rest. */
export class ListingCheck {
  readonly #schema: ItemSchema;
  readonly #key: string;
  readonly #kind: string;
  readonly #max: number;
  readonly #nameRule: ((name: string, item: Readonly<Record<string, unknown>>) => string | undefined) | undefined;
  readonly #refused: string[] = [];
  #chars = 0;
  #full = false;

  /**
   * `kind` names an item in what is said (`tool`, `prompt`, …); `key` is the member that names one;
   * `nameRule`, when given, says why an item of that name (its `key`, the item itself beside it for its
   * other members) is not served (undefined: it is).
   */
  constructor(
    schema: ItemSchema,
    key: string,
    kind: string,
    max: number = MAX_LISTING_CHARS,
    nameRule?: (name: string, item: Readonly<Record<string, unknown>>) => string | undefined,
  ) {
    this.#schema = schema;
    this.#key = key;
    this.#kind = kind;
    this.#max = max;
    this.#nameRule = nameRule;
  }

  /**
   * Whether `value` is served; when not, why is kept for {@link describe}. Items are served in the order
   * listed until one would take the listing past its size: from that one on, none is.
   */
  admit(value: unknown): boolean {
    const past = `past the ${this.#max} characters of JSON one server's listing may take`;
    if (this.#full) return this.refuse(value, past);
    const checked = checkItem(value, this.#schema, this.#key);
    if ("why" in checked) {
      this.#refused.push(checked.why);
      return false;
    }
    const item = value as Record<string, unknown>;
    const named = item[this.#key];
    const badName = this.#nameRule !== undefined && typeof named === "string" ? this.#nameRule(named, item) : undefined;
    if (badName !== undefined) return this.refuse(value, badName);
    if (this.#chars + checked.size > this.#max) {
      this.#full = true;
      return this.refuse(value, past);
    }
    this.#chars += checked.size;
    return true;
  }

  /** Leaves `value` out for `why` (always false). */
  refuse(value: unknown, why: string): false {
    this.#refused.push(`${itemName(value, this.#key)} (${why})`);
    return false;
  }

  /** The listing is past its size: ask for no more pages. */
  get full(): boolean {
    return this.#full;
  }

  /** `1 tool is not served: …` (the first five named), or "" when every item is served. */
  describe(): string {
    const refused = this.#refused;
    if (refused.length === 0) return "";
    const count = refused.length === 1 ? `1 ${this.#kind} is` : `${refused.length} ${this.#kind}s are`;
    return `${count} not served: ${refused.slice(0, 5).join("; ")}${refused.length > 5 ? "; …" : ""}`;
  }
}

/**
 * A listed item's name or URI as what is said shows it: JSON, cut at 80 characters, printable (a bidi
 * override or C1 control in an upstream's name reaches the operator's terminal as a `\uXXXX` escape).
 */
function itemName(value: unknown, key: string): string {
  const raw = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  if (typeof raw !== "string") return `(no ${key})`;
  return printable(JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw));
}
