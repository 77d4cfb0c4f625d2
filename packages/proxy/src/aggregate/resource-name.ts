import { findUnreadableName } from "@acp/core";
import { whyTextHidden } from "./hidden-text.js";

/** The most characters a resource's URI (a template's `uriTemplate`) may have to be served. */
export const MAX_RESOURCE_URI = 2048;

/** The most characters a resource's (or template's) `name` or `title` may have to be served. */
export const MAX_RESOURCE_NAME = 512;

/** A lone UTF-16 surrogate: no character at all, shown as whatever the reader makes of it. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why a resource or resource template an upstream listed is not served, or undefined when it is. A resource
 * is named by its URI (`uri`, a template by its `uriTemplate`), which is what the agent reads and what a
 * consent prompt and the audit show of a `resources/read`; its `name` and `title` are display text, shown
 * by the agent's client and read by the model. Unlike a tool's name, neither is held to the MCP name
 * format (a URI has `:` and `/`, a name may be any language's words); each is held to what a person can
 * read as it is: no control character, no invisible or format character (zero-width spaces and joiners,
 * bidirectional overrides and isolates, the soft hyphen, the invisible tags that spell text no reader
 * sees), no line separator or space other than U+0020, no space at either end and no lone surrogate (the
 * rule of names in policies and requests, `findUnreadableName`), a URI not empty nor over
 * {@link MAX_RESOURCE_URI} characters and a name or title not over {@link MAX_RESOURCE_NAME}: past those,
 * what differs is cut from view. The rest of its text (a `description`) may hold nothing the model reads and a
 * person does not see ({@link whyTextHidden}).
 *
 * @param key - the member naming the item: `uri` (a resource) or `uriTemplate` (a template)
 */
export function whyResourceRefused(item: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const id = item[key];
  if (typeof id === "string") {
    if (id.length === 0) return `its ${key} is empty`;
    const why = whyUnreadable(id, key, MAX_RESOURCE_URI);
    if (why !== undefined) return why;
  }
  for (const field of ["name", "title"] as const) {
    const text = item[field];
    if (typeof text !== "string") continue;
    const why = whyUnreadable(text, field, MAX_RESOURCE_NAME);
    if (why !== undefined) return why;
  }
  return whyTextHidden(item);
}

/**
 * Why a URI the agent asks to read (`resources/read`) is refused before it reaches any upstream or a person,
 * or undefined when it is not: the rule of a listed resource's URI ({@link whyResourceRefused}). A URI no
 * listing may name would otherwise be routed to a template's or the only resource server, and reach the
 * consent prompt and the audit reading as something it is not.
 */
export function whyUriRefused(uri: string): string | undefined {
  return whyResourceRefused({ uri }, "uri");
}

/**
 * Why `text` (an item's `field`, as said: `its title holds …`) cannot be read as it is, or undefined when it
 * can: over `max` characters, a character {@link findUnreadableName} refuses, or a lone surrogate.
 */
export function whyUnreadable(text: string, field: string, max: number): string | undefined {
  if (text.length > max) return `its ${field} is ${text.length} characters long, past the ${max} served`;
  const unreadable = findUnreadableName(text);
  if (unreadable !== undefined) return `its ${field} holds ${unreadable}`;
  const lone = LONE_SURROGATE.exec(text)?.[0];
  if (lone !== undefined) {
    return `its ${field} holds a lone surrogate (U+${lone.charCodeAt(0).toString(16).toUpperCase()})`;
  }
  return undefined;
}
