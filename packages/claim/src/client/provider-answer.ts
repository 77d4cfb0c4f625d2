import { ClaimClientError, isPrintable, printableExcerpt } from "./client-error.js";
import { tooLarge, type ClientResponse } from "./transport.js";

/** A provider's answer body, once known to be a JSON object. */
export type Answer = Readonly<Record<string, unknown>>;

/** A stable error code as the protocol writes them; anything else a provider sends is reported as `unknown`. */
const SNAKE_CODE = /^[a-z][a-z0-9_]{0,63}$/;

const isObject = (v: unknown): v is Answer => typeof v === "object" && v !== null && !Array.isArray(v);

/** The refusal of an answer that is not what the protocol says (`where`: the request, and the field). */
export function invalidAnswer(where: string, why: string): ClaimClientError {
  return new ClaimClientError(`${where}: ${why}`, 0, "claim_response_invalid");
}

function parseBody(body: string): unknown {
  if (body === "") return {};
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The JSON object of one answer to `what` (`METHOD /path`), or the error it stands for: over `maxBytes` (a
 * transport that does not cap), a redirect (never followed: a provider cannot send the agent's token or proof to
 * another host or to plain http), not a JSON object, or an error status. The provider's error message is shown
 * with its control characters escaped and cut to 200 characters; its code is kept only if it is snake_case.
 */
export function readAnswer(res: ClientResponse, what: string, host: string, maxBytes: number): Answer {
  if (Buffer.byteLength(res.body) > maxBytes) throw tooLarge(host, maxBytes);
  if (res.status >= 300 && res.status < 400) {
    const location = res.headers["location"];
    const to = typeof location === "string" ? ` to \`${printableExcerpt(location)}\`` : "";
    throw new ClaimClientError(
      `${what}: provider answered ${res.status}, a redirect${to}; the client follows no redirect`,
      0,
      "claim_redirect_refused",
    );
  }
  const parsed = parseBody(res.body);
  if (res.status >= 400) {
    const err = isObject(parsed) && isObject(parsed["error"]) ? parsed["error"] : {};
    const message = typeof err["message"] === "string" ? printableExcerpt(err["message"]) : `http ${res.status}`;
    const code = typeof err["code"] === "string" && SNAKE_CODE.test(err["code"]) ? err["code"] : "unknown";
    throw new ClaimClientError(`${what}: ${message}`, res.status, code);
  }
  if (!isObject(parsed)) throw invalidAnswer(what, `the answer (http ${res.status}) is not a JSON object`);
  return parsed;
}

/**
 * Reads the fields of an answer, refusing one that is missing, of the wrong type, or would carry a control
 * character to the user's terminal. `httpsOnly`: links must be https (the provider was reached over https).
 */
export class AnswerReader {
  /** See the class comment. */
  constructor(
    /** The answer as parsed. */
    readonly answer: Answer,
    /** The request it answers, `METHOD /path`, for messages. */
    readonly where: string,
    private readonly httpsOnly: boolean,
    private readonly prefix = "",
  ) {}

  private fail(name: string, why: string): never {
    throw invalidAnswer(this.where, `\`${this.prefix}${name}\` in the answer ${why}`);
  }

  /** A string of 1 to `max` printable characters (identifiers, handles, codes, dates). */
  text(name: string, max = 200): string {
    const v = this.answer[name];
    if (typeof v !== "string" || v === "" || v.length > max || !isPrintable(v))
      this.fail(name, `is missing or not a string of 1–${max} printable characters`);
    return v;
  }

  /** {@link text}, or null when the field is null or absent. */
  optionalText(name: string, max = 200): string | null {
    return this.answer[name] === undefined || this.answer[name] === null ? null : this.text(name, max);
  }

  /** A credential sent back in a header: 1 to 4096 visible ASCII characters. */
  token(name: string): string {
    const v = this.answer[name];
    if (typeof v !== "string" || !/^[\x21-\x7e]{1,4096}$/.test(v))
      this.fail(name, "is missing or not 1–4096 visible ASCII characters");
    return v;
  }

  /** An absolute http(s) URL (https only after an https provider), normalized, with no credentials in it. */
  url(name: string): string {
    const v = this.answer[name];
    let u: URL | undefined;
    try {
      u = typeof v === "string" && v.length <= 2048 ? new URL(v) : undefined;
    } catch {
      u = undefined;
    }
    const schemes = this.httpsOnly ? ["https:"] : ["https:", "http:"];
    if (u === undefined || !schemes.includes(u.protocol) || u.username !== "" || u.password !== "")
      this.fail(name, `is missing or not an ${this.httpsOnly ? "https" : "http(s)"} URL of at most 2048 characters`);
    if (!isPrintable(u.href)) this.fail(name, "holds a control character");
    return u.href;
  }

  /** A whole number from `min` to `max`. */
  integer(name: string, min: number, max: number): number {
    const v = this.answer[name];
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
      this.fail(name, `is missing or not a whole number from ${min} to ${max}`);
    return v;
  }

  /** A boolean, `fallback` when absent. */
  boolean(name: string, fallback: boolean): boolean {
    const v = this.answer[name] ?? fallback;
    if (typeof v !== "boolean") this.fail(name, "is not true or false");
    return v;
  }

  /** A nested object, read with the same rules (its fields named `name.field` in messages). */
  object(name: string): AnswerReader {
    const v = this.answer[name];
    if (!isObject(v)) this.fail(name, "is missing or not an object");
    return new AnswerReader(v, this.where, this.httpsOnly, `${this.prefix}${name}.`);
  }
}
