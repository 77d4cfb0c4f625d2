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

/** A short, safe rendering of user input for a message: backticked, one line, cut at `max` characters. */
export function quoteValue(value: unknown, max = 60): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return `\`${cut.replace(/`/g, "'").replace(/[\r\n\t]+/g, " ")}\``;
}
