import { whyTextHidden } from "./hidden-text.js";
import { MAX_RESOURCE_NAME, whyUnreadable } from "./resource-name.js";

/** The longest tool or prompt name served (MCP tool name format, SEP-986). */
export const MAX_ITEM_NAME = 128;

/** A name of the MCP tool name format (SEP-986): 1–128 ASCII letters, digits, `_`, `-` and `.`. */
const ITEM_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** A character of that format. */
const NAME_CHAR = /[A-Za-z0-9_.-]/;

/**
 * Why a tool or prompt an upstream listed is not served under `name`, or undefined when its name is of the
 * MCP tool name format (SEP-986: 1 to {@link MAX_ITEM_NAME} characters of `A-Z a-z 0-9 _ - .`). Any other
 * name reads ambiguously where a person and a policy meet it: a space or `on server x` text in a consent
 * prompt or an audit line, brackets and commas that look like syntax, a line break or control character
 * that starts a new line, a letter of another script that passes for a Latin one, a name so long the part
 * that differs is cut from view. Such an item is left out of the listing (its calls are refused as calls to
 * an unknown name), and the reason is said to the operator; the server's other items are served.
 *
 * Given the `item` too (as a listing's check gives it), its display titles are held to {@link whyTitleRefused}
 * and the rest of its text to {@link whyTextHidden} (no text the model reads and a person does not see).
 */
export function whyItemNameRefused(name: string, item?: Readonly<Record<string, unknown>>): string | undefined {
  if (ITEM_NAME.test(name)) return item === undefined ? undefined : (whyTitleRefused(item) ?? whyTextHidden(item));
  const format = `the MCP name format is 1 to ${MAX_ITEM_NAME} characters of A-Z a-z 0-9 _ - . (SEP-986)`;
  if (name.length === 0) return `its name is empty: ${format}`;
  if (name.length > MAX_ITEM_NAME) return `its name is ${name.length} characters long: ${format}`;
  for (const char of name) {
    if (NAME_CHAR.test(char)) continue;
    const code = `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
    return `its name holds ${code}: ${format}`;
  }
  return `its name is not of the MCP name format: ${format}`;
}

/**
 * Why a tool or prompt an upstream listed is not served for its `title` (or a tool's `annotations.title`),
 * or undefined when each reads as it is. A title is not held to the name format (it is display text in any
 * language), but the agent's client shows it in place of the name, in its tool list and its own consent
 * prompt, and the model reads it: one with a control, invisible or format character (a bidi override, a
 * zero-width space, the tag characters that spell text no reader sees), a line separator, a space other than
 * U+0020 or at either end, a lone surrogate, or over {@link MAX_RESOURCE_NAME} characters reads as something
 * it is not there (the rule of a resource's name and title). The item is left out, not served with its title
 * taken off: every other field of it came from the same server that wrote the hidden text, and a tool served
 * without the title it is pinned with would read to a person as a changed definition.
 */
export function whyTitleRefused(item: Readonly<Record<string, unknown>>): string | undefined {
  const annotations = item["annotations"];
  const titles: [string, unknown][] = [
    ["title", item["title"]],
    [
      "annotations.title",
      typeof annotations === "object" && annotations !== null
        ? (annotations as Record<string, unknown>)["title"]
        : undefined,
    ],
  ];
  for (const [field, text] of titles) {
    if (typeof text !== "string") continue;
    const why = whyUnreadable(text, field, MAX_RESOURCE_NAME);
    if (why !== undefined) return why;
  }
  return undefined;
}

/**
 * Why a prompt an upstream listed is not served, or undefined when it is: {@link whyItemNameRefused}, and
 * each of its `arguments` held by its `name` and `title` to the rule of a title (a client shows them as the
 * labels of the fields a person fills in, the model reads them, and `prompts/get` names its arguments so).
 */
export function whyPromptRefused(name: string, item: Readonly<Record<string, unknown>>): string | undefined {
  if (!ITEM_NAME.test(name)) return whyItemNameRefused(name);
  const titled = whyTitleRefused(item);
  if (titled !== undefined) return titled;
  const args = item["arguments"];
  for (const [i, arg] of (Array.isArray(args) ? (args as unknown[]) : []).entries()) {
    if (typeof arg !== "object" || arg === null) continue;
    for (const field of ["name", "title"] as const) {
      const text = (arg as Record<string, unknown>)[field];
      if (typeof text !== "string") continue;
      const why = whyUnreadable(text, `arguments.${i}.${field}`, MAX_RESOURCE_NAME);
      if (why !== undefined) return why;
    }
  }
  return whyTextHidden(item);
}
