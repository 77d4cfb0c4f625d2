/** Reading an event from JSON text, with a size cap and the line and column of a syntax error. */
import { fail, ok, type Result } from "../issues/index.js";
import { findDuplicateKey } from "./duplicate-key.js";
import { findJsonErrorOffset } from "./json-error-offset.js";
import { showValue } from "./validate.js";

/** The largest event text accepted: 1 MiB of UTF-8. */
export const MAX_CONTRACT_EVENT_BYTES = 1024 * 1024;

function utf8Length(text: string): number {
  if (text.length > MAX_CONTRACT_EVENT_BYTES) return text.length;
  return new TextEncoder().encode(text).length;
}

function describeOffset(text: string, offset: number): string {
  const c = text[offset];
  if (offset < 0) return "the text is not valid JSON";
  if (c === undefined) return "unexpected end of input";
  const code = c.charCodeAt(0);
  const shown =
    code < 0x20 || code === 0x60 || code > 0x7e ? `U+${code.toString(16).toUpperCase().padStart(4, "0")}` : c;
  return `unexpected character \`${shown}\``;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}

/**
 * Parses event text as JSON. Text over {@link MAX_CONTRACT_EVENT_BYTES} is refused unread
 * (`contract_too_large`); malformed JSON is `contract_malformed_json` with its line and column when
 * the parser reports a position; an object that repeats a member name is `contract_duplicate_key`
 * with the place of the repeat (`JSON.parse` would keep the last value, other readers the first).
 * The parsed value is not validated here.
 */
export function parseContractEventJson(text: string): Result<unknown> {
  // A UTF-16 unit is 1 to 3 UTF-8 bytes, so most texts are judged without encoding them.
  const bytes = text.length * 3 <= MAX_CONTRACT_EVENT_BYTES ? 0 : utf8Length(text);
  if (bytes > MAX_CONTRACT_EVENT_BYTES) {
    const message = `event is larger than the ${MAX_CONTRACT_EVENT_BYTES}-byte limit`;
    return fail([{ code: "contract_too_large", path: [], message }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    if (err instanceof RangeError) {
      return fail([{ code: "contract_not_json", path: [], message: "event is nested too deeply to parse" }]);
    }
    const why = err instanceof Error ? err.message : String(err);
    const reported = /position (\d+)/.exec(why)?.[1];
    const offset = reported !== undefined ? Number(reported) : findJsonErrorOffset(text);
    // Our own words: the parser's message quotes the input, which may hold a secret.
    const message = `malformed JSON: ${describeOffset(text, offset)}`;
    if (offset < 0) return fail([{ code: "contract_malformed_json", path: [], message }]);
    const where = lineAndColumn(text, offset);
    return fail([{ code: "contract_malformed_json", path: [], message, ...where }]);
  }
  const repeated = findDuplicateKey(text);
  if (repeated === undefined) return ok(value);
  const message = `duplicate field ${showValue(repeated.key)} (not I-JSON: JSON readers disagree on which value counts)`;
  const where = lineAndColumn(text, repeated.offset);
  return fail([{ code: "contract_duplicate_key", path: [...repeated.path], message, ...where }]);
}
