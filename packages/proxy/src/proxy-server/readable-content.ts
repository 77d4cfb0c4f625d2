import { TextDecoder } from "node:util";
import { MAX_ENTRY_CHARS } from "@acp/core";

/**
 * What an agent can read of what an upstream returned (a tool result's content, a resource's contents, a
 * prompt's messages), as text for the session runtime: provenance traces values to it and instruction
 * detection scores it. Images and audio are not read; a blob (Base64) is read when its MIME type is text-like
 * (`text/*`, JSON, XML, YAML, an e-mail, …) or, without a type, when it is valid UTF-8: a client shows such a
 * blob to the model as readily as text. `_meta` and `annotations` are not read: they are metadata for the
 * client, not content for the model.
 *
 * Decoding is bounded: one reader (one result) decodes at most {@link MAX_ENTRY_CHARS} bytes of blobs, as much
 * as the session keeps of one result. What it had to leave undecoded it names in `cut`, and the caller reports
 * the result unreadable, so the session asks before consequential calls as for any content it could not keep.
 */
export class ContentReader {
  readonly #maxBytes: number;
  #bytesLeft: number;
  /** Why part of what was read could not be told to the session (a blob past the limit); unset when all was. */
  cut: string | undefined;

  constructor(maxBlobBytes: number = MAX_ENTRY_CHARS) {
    this.#maxBytes = maxBlobBytes;
    this.#bytesLeft = maxBlobBytes;
  }

  /**
   * One content block (a tool result's item, a prompt message's content): text; an embedded resource's URI,
   * text or readable blob; a resource link's URI, name, title and description (an address an attacker chose,
   * and words the agent reads). Images and audio hold no text the runtime can score.
   */
  block(c: unknown): string {
    if (!isRecord(c)) return "";
    switch (c["type"]) {
      case "text":
        return str(c["text"]);
      case "resource":
        return isRecord(c["resource"]) ? this.resource(c["resource"], true) : "";
      case "resource_link":
        return lines([str(c["uri"]), str(c["name"]), str(c["title"]), str(c["description"])]);
      default:
        return "";
    }
  }

  /** One resource's contents: its text, or its blob decoded when readable; with its URI when `withUri`. */
  resource(r: unknown, withUri = false): string {
    if (!isRecord(r)) return "";
    const body = typeof r["text"] === "string" ? r["text"] : this.blob(r["mimeType"], r["blob"]);
    return lines([withUri ? str(r["uri"]) : "", body]);
  }

  /** A Base64 blob's text when its MIME type says it is text (or it has none and is valid UTF-8); else `""`. */
  blob(mimeType: unknown, blob: unknown): string {
    if (typeof blob !== "string" || blob === "") return "";
    const type = typeof mimeType === "string" && mimeType.trim() !== "" ? parseType(mimeType) : undefined;
    if (type !== undefined && !isTextType(type.essence)) return "";
    // every 4 Base64 characters are 3 bytes (less the padding): decode no more than the bytes left
    const padding = blob.endsWith("==") ? 2 : blob.endsWith("=") ? 1 : 0;
    const whole = Math.floor((blob.length * 3) / 4) - padding;
    const fits = Math.min(whole, this.#bytesLeft);
    const source = fits < whole ? blob.slice(0, Math.floor(fits / 3) * 4) : blob;
    if (fits < whole) {
      this.cut = `a blob of about ${whole} bytes is past the ${this.#maxBytes} bytes of blobs read of one result`;
    }
    const bytes = Buffer.from(source, "base64");
    this.#bytesLeft -= bytes.length;
    if (type === undefined) {
      try {
        return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        return "";
      }
    }
    return decoderFor(type.charset).decode(bytes);
  }
}

/**
 * What the agent's client reads of a request an upstream sends it: of `sampling/createMessage` the system
 * prompt and each message's content (a block or a list of blocks, read as a result's are), which the client's
 * model reads; of `elicitation/create` the message, the schema of the form (its titles, descriptions,
 * choices and defaults are shown as written) and the URL it asks to open. Other requests: `""`.
 */
export function requestText(reader: ContentReader, method: string, params: unknown): string {
  if (!isRecord(params)) return "";
  if (method === "sampling/createMessage") {
    const messages = Array.isArray(params["messages"]) ? (params["messages"] as unknown[]) : [];
    const contents = messages.flatMap((m) => {
      const content = isRecord(m) ? m["content"] : undefined;
      return Array.isArray(content) ? (content as unknown[]) : [content];
    });
    return lines([str(params["systemPrompt"]), ...contents.map((c) => reader.block(c))]);
  }
  if (method === "elicitation/create") {
    const schema = params["requestedSchema"];
    return lines([str(params["message"]), str(params["url"]), schema === undefined ? "" : jsonText(schema)]);
  }
  return "";
}

/** What the agent's client shows of a log line an upstream sends (`notifications/message`): its logger and data. */
export function logText(params: unknown): string {
  if (!isRecord(params)) return "";
  const data = params["data"];
  return lines([str(params["logger"]), typeof data === "string" ? data : data === undefined ? "" : jsonText(data)]);
}

/** A value as JSON text; a value JSON cannot write (too deep) as the reason, which the caller cannot tell whole. */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch (err) {
    throw new Error(`it could not be read: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** The text-like types: `text/*`, JSON, XML, YAML, JavaScript, forms, SQL, GraphQL, TOML, CSV, e-mail. */
export function isTextType(essence: string): boolean {
  const [top = "", sub = ""] = essence.split("/");
  if (top === "text") return true;
  if (sub.endsWith("+json") || sub.endsWith("+xml") || sub.endsWith("+yaml")) return true;
  if (top === "message") return sub === "rfc822" || sub === "global";
  return (
    top === "application" &&
    [
      "json",
      "xml",
      "yaml",
      "x-yaml",
      "javascript",
      "ecmascript",
      "x-javascript",
      "x-www-form-urlencoded",
      "sql",
      "graphql",
      "toml",
      "csv",
      "x-sh",
      "x-httpd-php",
      "ndjson",
      "x-ndjson",
      "jsonl",
    ].includes(sub)
  );
}

export function parseType(mimeType: string): { readonly essence: string; readonly charset?: string } {
  const [essence = "", ...params] = mimeType.split(";").map((p) => p.trim());
  const charset = params
    .map((p) => /^charset\s*=\s*"?([^";]+)"?$/i.exec(p)?.[1])
    .find((c): c is string => c !== undefined);
  return { essence: essence.toLowerCase(), ...(charset !== undefined ? { charset } : {}) };
}

/** A decoder for the blob's charset; UTF-8 when it names none or one this runtime does not know. */
function decoderFor(charset: string | undefined): TextDecoder {
  if (charset !== undefined) {
    try {
      return new TextDecoder(charset);
    } catch {
      /* an unknown label: read as UTF-8 */
    }
  }
  return new TextDecoder("utf-8");
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function lines(parts: readonly string[]): string {
  return parts.filter(Boolean).join("\n");
}
