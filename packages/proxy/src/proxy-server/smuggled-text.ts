/**
 * Text an upstream returns at run time (a tool result, a prompt's messages, a resource's contents, a
 * completion's values, an error's message) can carry what the model reads and a person never sees: Unicode
 * tag characters (U+E0000–U+E007F) spell ASCII no font draws ("ASCII smuggling"), and bidirectional
 * embeddings, overrides and isolates show text in another order than it is read. The listing refuses such
 * definitions (`findHiddenText` in aggregate/hidden-text.ts); a result cannot be refused
 * after the call ran, so these characters are removed from its text before the agent reads it. The three
 * emoji flag tag sequences (England, Scotland, Wales) are kept: they are the only tags ordinary text holds.
 * Other invisible characters (joiners, variation selectors) stay: legitimate text in many scripts needs them.
 * Members' names are cleaned too (a form field's, structured content's); a name that, cleaned, is another
 * member's is dropped.
 * A resource's `blob` whose MIME type says it is text (or that has none and is valid UTF-8), which the agent's
 * client may decode and hand its model, is decoded and cleaned the same way (written back as UTF-8, its
 * `charset` then said to be `utf-8`); other Base64 (an image's or audio's `data`, a binary blob) is not read.
 */
import type { CallObserver } from "../gate/types.js";
import { isTextType, parseType } from "./readable-content.js";

/** Any character removed: the quick test before any work (most results hold none). */
const SUSPECT = /[\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u;
/** A flag tag sequence (kept, captured) or one character to remove. */
const REMOVE =
  /(\u{1f3f4}\u{e0067}\u{e0062}(?:\u{e0065}\u{e006e}\u{e0067}|\u{e0073}\u{e0063}\u{e0074}|\u{e0077}\u{e006c}\u{e0073})\u{e007f})|[\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/gu;
/**
 * Whether `record[key]` holds Base64, not text: a `blob` (a resource's; a text-like one is cleaned by
 * `cleanBlob`), or the `data` of an image's or audio's content, which names its `mimeType`. Any other
 * `data` is text the agent's client may show its model: a log line's (`notifications/message`), an error's.
 */
function isBase64Member(record: Record<string, unknown>, key: string): boolean {
  return key === "blob" || (key === "data" && typeof record["mimeType"] === "string");
}

/** The `_meta` key under which a result says how many hidden characters were removed from it. */
export const HIDDEN_TEXT_META_KEY = "acp/hidden_text_removed";

/** What {@link withoutSmuggledText} removed: how many characters. */
export interface SmuggledText {
  readonly characters: number;
}

function cleanString(text: string, count: { n: number }): string {
  if (!SUSPECT.test(text)) return text;
  return text.replace(REMOVE, (match: string, flag: string | undefined) => {
    if (flag !== undefined) return flag;
    count.n += 1;
    return "";
  });
}

function clean(value: unknown, count: { n: number }, depth: number): unknown {
  if (typeof value === "string") return cleanString(value, count);
  // a result nested past this is not walked (the transport refuses to write one that deep anyway)
  if (typeof value !== "object" || value === null || depth > 64) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = clean(value[i], count, depth + 1);
      if (next !== value[i]) (out ??= value.slice())[i] = next;
    }
    return out ?? value;
  }
  const record = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  const blob = cleanBlob(record, count);
  if (blob !== undefined) out = { ...record, ...blob };
  for (const key of Object.keys(record)) {
    if (blob !== undefined && Object.hasOwn(blob, key)) continue;
    const child = record[key];
    const next = typeof child === "string" && isBase64Member(record, key) ? child : clean(child, count, depth + 1);
    // a member's name is read too (a form's field, structured content's keys): cleaned as its value is
    const name = cleanString(key, count);
    if (name !== key) {
      out ??= { ...record };
      delete out[key];
      // a name that, cleaned, is another member's: that one stays, this one goes (defined: `__proto__` is a name)
      if (!Object.hasOwn(record, name))
        Object.defineProperty(out, name, { value: next, enumerable: true, writable: true, configurable: true });
    } else if (next !== child) (out ??= { ...record })[key] = next;
  }
  return out ?? value;
}

/** Largest text blob decoded to be cleaned (Base64 characters): past it the blob is left as it is (and a reader cuts it). */
const MAX_BLOB_CHARS = 8 * 1024 * 1024;

/**
 * A resource's text-like `blob` (its MIME type `text/*`, JSON, …, or none while it is valid UTF-8) with the hidden
 * characters taken out, written back as UTF-8 Base64, with `mimeType` saying `charset=utf-8` when it named
 * another; `undefined` when it is no such blob or holds none.
 */
function cleanBlob(record: Record<string, unknown>, count: { n: number }): Record<string, unknown> | undefined {
  const blob = record["blob"];
  if (typeof blob !== "string" || blob === "" || blob.length > MAX_BLOB_CHARS) return undefined;
  const mimeType = record["mimeType"];
  const type = typeof mimeType === "string" && mimeType.trim() !== "" ? parseType(mimeType) : undefined;
  if (type !== undefined && !isTextType(type.essence)) return undefined;
  const bytes = Buffer.from(blob, "base64");
  let text: string;
  try {
    text = new TextDecoder(type?.charset ?? "utf-8", { fatal: true }).decode(bytes);
  } catch {
    // not text in its charset (or an unknown charset): no reader decodes it as text
    return undefined;
  }
  const before = count.n;
  const cleaned = cleanString(text, count);
  if (count.n === before) return undefined;
  const utf8 = type?.charset === undefined || /^utf-?8$/i.test(type.charset);
  return {
    blob: Buffer.from(cleaned, "utf8").toString("base64"),
    ...(utf8 || type === undefined ? {} : { mimeType: `${type.essence}; charset=utf-8` }),
  };
}

/**
 * `result` (a JSON-RPC result an upstream returned) with every tag character (but the flag sequences) and
 * bidirectional control removed from its strings and member names, and `removed` saying how many; the same object, and
 * `removed` undefined, when it holds none. Its `_meta` then says so under {@link HIDDEN_TEXT_META_KEY}, so
 * the agent's client can tell the text was changed.
 */
export function withoutSmuggledText<T extends object>(
  result: T,
): { readonly result: T; readonly removed?: SmuggledText } {
  const count = { n: 0 };
  const cleaned = clean(result, count, 0) as T;
  if (count.n === 0) return { result };
  const meta = (cleaned as { _meta?: unknown })._meta;
  const withMeta = {
    ...cleaned,
    _meta: {
      ...(typeof meta === "object" && meta !== null && !Array.isArray(meta) ? meta : {}),
      [HIDDEN_TEXT_META_KEY]: count.n,
    },
  };
  return { result: withMeta, removed: { characters: count.n } };
}

/** `text` (an upstream's error message) without tag characters (but the flags) and bidi controls. */
export function withoutSmuggledString(text: string): string {
  return cleanString(text, { n: 0 });
}

/**
 * `observer` (the session runtime) told every result's text without tag characters (but the flags) and bidi
 * controls, and told it had hidden text (`hiddenTextRemoved`) when some were taken out here: whatever path
 * told it — an upstream's JSON-RPC error whose `data` the agent got cleaned but the runtime was handed as
 * sent, a text-like blob the runtime decodes and the agent's client may too — the runtime never reads what a
 * person cannot see, and counts it as the injection attempt it is. One regular-expression test per text.
 */
export function withoutSmuggledObservations(observer: CallObserver): CallObserver {
  return {
    executed: (sessionId, request) => observer.executed(sessionId, request),
    result(sessionId, server, tool, text, options) {
      const count = { n: 0 };
      const told = cleanString(text, count);
      if (count.n === 0) {
        if (options === undefined) observer.result(sessionId, server, tool, text);
        else observer.result(sessionId, server, tool, text, options);
        return;
      }
      observer.result(sessionId, server, tool, told, { ...options, hiddenTextRemoved: true });
    },
    ...(observer.unreadable !== undefined
      ? {
          unreadable: (sessionId: string, server: string, tool: string, why: string) =>
            observer.unreadable?.(sessionId, server, tool, withoutSmuggledString(why)),
        }
      : {}),
    ...(observer.closed !== undefined ? { closed: (sessionId: string) => observer.closed?.(sessionId) } : {}),
  };
}
