/**
 * Questions a person can answer: what untrusted text wants done, in words, not tool names alone.
 */
import type { Category } from "../request/index.js";
import { quoteValue } from "./errors.js";
import type { PieceProvenance } from "./provenance.js";
import { EARLIER_SESSION } from "./provenance-memory.js";
import { urlHost } from "./value-tokens.js";

/** A verb phrase for what an action does with a value (`send email to`, `send money to`). */
export function describeActionVerb(action: string, category: Category): string {
  const words = action.toLowerCase().split(/[._\-\s/]+/);
  const has = (...w: string[]): boolean => w.some((x) => words.includes(x));
  // A read sends nothing: `search_emails` is not "send email to".
  if (category === "read") return `use \`${action}\` with`;
  if (has("email", "mail", "gmail")) return "send email to";
  if (category === "communication" || has("message", "sms", "chat", "dm")) return "send a message to";
  if (category === "financial" || has("pay", "transfer", "money", "payment")) return "send money to";
  if (category === "public" || has("publish", "post", "tweet")) return "publish";
  if (has("invite", "share")) return "share with";
  if (has("delete", "remove", "drop")) return "delete";
  return `use \`${action}\` with`;
}

/** Where a source came from, without its sequence number (`calendar.read_events#3` → `calendar.read_events`). */
export function sourceName(source: string): string {
  const hash = source.lastIndexOf("#");
  return hash > 0 ? source.slice(0, hash) : source;
}

/** What a whole argument looks like: a link, an address or host, or other text. */
function shapeOf(text: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return "url";
  if (text.includes("@") || urlHost(text) !== undefined) return "email";
  return "value";
}

/** A word of an identifier: letters, digits and the characters that join its parts. */
const IDENTIFIER_WORD = /[\p{L}\p{N}\p{M}._@+-]+/gu;
const NOT_LATIN = /[^\p{Script=Latin}\p{N}._@+-]/gu;

/**
 * Shows the non-Latin letters of a word that mixes them with Latin ones as `\u{430}`: `bob@p\u{430}rtner.example`
 * is not the address the user typed, however alike the two look.
 */
function revealLookalikes(text: string): string {
  return text.replace(IDENTIFIER_WORD, (word) =>
    /\p{Script=Latin}/u.test(word) && /[^\p{Script=Latin}\p{N}._@+-]/u.test(word)
      ? word.replace(NOT_LATIN, (ch) => `\\u{${(ch.codePointAt(0) ?? 0).toString(16)}}`)
      : word,
  );
}

/**
 * A tracked piece as a person should see it: where it goes in full view. An address or a host keeps its end
 * (`…aaaa.attacker.example`, not `bank.example.com.aaaa…`); a link shows its scheme and host (the host's end
 * kept) and only the start of its path; anything else is cut at its end.
 */
export function quotePiece(piece: Pick<PieceProvenance, "kind" | "piece">): string {
  // a whole argument is shown as the identifier it holds (its end matters as much)
  const kind = piece.kind === "value" ? shapeOf(piece.piece) : piece.kind;
  const text = revealLookalikes(piece.piece);
  if (kind === "email" || kind === "host") return quoteValue(text, 60, "end");
  if (kind !== "url") return quoteValue(text);
  const at = /^((?:[a-z][a-z0-9+.-]*:\/\/)?)([^/?#]*)(.*)$/is.exec(text);
  const [scheme, authority, rest] = [at?.[1] ?? "", at?.[2] ?? text, at?.[3] ?? ""];
  const where = quoteValue(authority, 60, "end").slice(1, -1);
  const path = rest === "" ? "" : quoteValue(rest, 20).slice(1, -1);
  return `\`${quoteValue(scheme).slice(1, -1)}${where}${path}\``;
}

/**
 * The semantic question for a tainted value: ``text from `calendar.read_events` wants to send email to
 * `mark@attacker.example` ``. Names the first untrusted source; more sources are counted.
 */
export function taintQuestion(piece: PieceProvenance, action: string, category: Category): string {
  const sources = [...new Set(piece.untrusted_sources.map(sourceName))];
  const first = sources[0] ?? "untrusted content";
  const more = sources.length > 1 ? ` (and ${sources.length - 1} more source${sources.length > 2 ? "s" : ""})` : "";
  // a source an earlier session read (ProvenanceMemory): said as such, the tool it came from named
  const earlier = first.startsWith(EARLIER_SESSION);
  const from = earlier
    ? `text an earlier session read from \`${first.slice(EARLIER_SESSION.length)}\``
    : `text from \`${first}\``;
  // words (a subject, a body pasted whole) are what the call carries, not whom it goes to: say which argument
  if (piece.kind === "value" && /\s/.test(piece.piece.trim())) {
    const argument = String(piece.path[0] ?? "arguments");
    const what = `the \`${quoteValue(argument).slice(1, -1)}\` of \`${action}\``;
    return `${what} comes from ${earlier ? "what an earlier session read from" : "the text of"} \`${earlier ? first.slice(EARLIER_SESSION.length) : first}\`${more}: ${quotePiece(piece)}`;
  }
  return `${from}${more} wants to ${describeActionVerb(action, category)} ${quotePiece(piece)}`;
}
