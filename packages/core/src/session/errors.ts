import type { Issue } from "../issues/index.js";
import type { SessionCode } from "./codes.js";

/**
 * The one error the session runtime throws: a stable {@link SessionCode}, a house-style message and, for
 * validation failures, the issues. Every throw is also recorded in the session's event log.
 */
export class SessionError extends Error {
  readonly code: SessionCode;
  readonly issues: readonly Issue[];
  constructor(code: SessionCode, message: string, issues: readonly Issue[] = []) {
    super(message);
    this.name = "SessionError";
    this.code = code;
    this.issues = issues;
  }
}

/** Whether a value is a {@link SessionError} (optionally with the given code). */
export function isSessionError(value: unknown, code?: SessionCode): value is SessionError {
  return value instanceof SessionError && (code === undefined || value.code === code);
}

/**
 * A short, safe rendering of untrusted input for a message a person reads (an error, the question before a
 * call): backticked, one line, control and format characters shown as `\u{1b}` (an escape sequence or a
 * right-to-left override cannot restyle or reorder what the person sees), cut at `max` characters — at its
 * end, or with `keep: "end"` at its start, so that the end (the domain of an address) stays in view.
 */
export function quoteValue(value: unknown, max = 60, keep: "start" | "end" = "start"): string {
  const raw = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  const text = raw
    .replace(/`/g, "'")
    .replace(/[\r\n\t]+/g, " ")
    .replace(/[\p{Cc}\p{Cf}]/gu, (ch) => `\\u{${(ch.codePointAt(0) ?? 0).toString(16)}}`);
  const chars = [...text];
  if (chars.length <= max) return `\`${text}\``;
  const cut = keep === "end" ? `…${chars.slice(chars.length - max).join("")}` : `${chars.slice(0, max).join("")}…`;
  return `\`${cut}\``;
}
