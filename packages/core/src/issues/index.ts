/**
 * Validation issues: parsers and validators return a list of these instead of throwing.
 * Messages follow the house style: lowercase, one line, no final period, user input in backticks.
 */
export interface Issue {
  /** Stable snake_case error code, listed in docs/reference/errors.md. */
  readonly code: string;
  /** Where in the document: keys and indexes from the root. */
  readonly path: readonly (string | number)[];
  readonly message: string;
  /** 1-based line in the source text, when known. */
  readonly line?: number;
  /** 1-based column in the source text, when known. */
  readonly column?: number;
  /** A suggestion a person can act on (`did you mean \`allow\``). */
  readonly help?: string;
}

/** The non-throwing result of a parse or validation. */
export type Result<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly issues: readonly Issue[] };

/** Builds a successful result. */
export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

/** Builds a failed result. */
export function fail<T = never>(issues: readonly Issue[]): Result<T> {
  return { ok: false, issues };
}

/** Thrown by the `assert*` entry points; carries the issues. */
export class ValidationError extends Error {
  readonly issues: readonly Issue[];
  constructor(what: string, issues: readonly Issue[]) {
    super(`${what}: ${issues.map((i) => formatIssue(i)).join("; ")}`);
    this.name = "ValidationError";
    this.issues = issues;
  }
}

/** Formats an issue as `FILE:LINE:COL: message (help)`, omitting the parts that are unknown. */
export function formatIssue(issue: Issue, file?: string): string {
  const where: string[] = [];
  if (file !== undefined) where.push(file);
  if (issue.line !== undefined) {
    where.push(String(issue.line));
    if (issue.column !== undefined) where.push(String(issue.column));
  } else if (issue.path.length > 0 && file === undefined) {
    where.push(issue.path.join("."));
  }
  const prefix = where.length > 0 ? `${where.join(":")}: ` : "";
  const help = issue.help !== undefined ? ` (${issue.help})` : "";
  return `${prefix}${issue.message}${help}`;
}

export { missingColonHint, yamlErrorMessage, yamlErrorPlace, yamlErrorPosition, yamlErrorText } from "./yaml-error.js";
