/**
 * The JSON body parser of every route. `JSON.parse` keeps the last of two equal keys, so
 * `{"tool":"delete_everything","tool":"read_file"}` was decided as `read_file` while a client, a gateway or
 * a log that keeps the first (or refuses) saw `delete_everything`: a body is refused when one object holds
 * a key twice (RFC 8259 names SHOULD be unique; I-JSON, RFC 7493, says MUST), and when it holds a key that
 * reaches a prototype (`__proto__`, or `prototype` inside `constructor`), as Fastify's default parser did;
 * and when its bytes are not UTF-8 (each bad byte would have been read as U+FFFD: decided on a text the
 * caller never sent).
 */
import type { FastifyInstance } from "fastify";
import { findKeyProblem } from "@acp/proxy";
import { HttpError } from "./error-body.js";

export { findKeyProblem };

/** Parses a JSON body; throws the 400 `malformed_json` answer for empty, invalid or ambiguous text. */
export function parseJsonBody(raw: string): unknown {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text.trim() === "") throw new HttpError(400, "malformed_json", "the body is empty (expected a JSON object)");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, "malformed_json", "the body is not valid JSON");
  }
  if (typeof value === "object" && value !== null) {
    const problem = findKeyProblem(text);
    if (problem !== null) throw new HttpError(400, "malformed_json", `the body is ambiguous JSON: ${problem}`);
  }
  return value;
}

/** Strict UTF-8: a byte sequence that is not UTF-8 throws instead of becoming U+FFFD. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The text of a JSON body; throws the 400 `malformed_json` answer for bytes that are not UTF-8 (RFC 8259
 * §8.1). Decoded leniently, each bad byte became U+FFFD: the service decided and recorded a text the caller
 * never sent, while the caller, or a gateway that refuses such bytes, acts on its own.
 */
export function decodeJsonBody(body: Uint8Array): string {
  try {
    return UTF8.decode(body);
  } catch {
    throw new HttpError(400, "malformed_json", "the body is not valid UTF-8 (JSON text is UTF-8: RFC 8259)");
  }
}

/** Installs {@link parseJsonBody} as the parser of `application/json` (the app's body limit applies). */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(decodeJsonBody(body as Buffer)));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
