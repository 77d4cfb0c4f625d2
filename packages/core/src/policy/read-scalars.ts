import { isMap } from "yaml";
import { compileGlob } from "../glob/index.js";
import { findUnreadableName } from "../request/index.js";
import { suggest } from "../suggest/index.js";
import type { PolicyIssueCode } from "./issue-codes.js";
import { listWords, report, reportType, scalarValue, type Field, type ReadContext, type Scope } from "./node-reader.js";
import { showInput } from "./show-input.js";

/** Reads a string value; anything else is a `wrong_type` issue. */
export function readString(ctx: ReadContext, scope: Scope, field: Field, help?: string): string | undefined {
  const value = scalarValue(field.node);
  if (typeof value === "string") return value;
  reportType(ctx, scope, field, "a string", help);
  return undefined;
}

/** How an enumerated value is named and checked. */
export interface EnumShape<T extends string> {
  readonly values: readonly T[];
  readonly code: PolicyIssueCode;
  /** The noun in messages: `action`, `category`, `risk level`. */
  readonly noun: string;
  readonly synonyms?: Readonly<Record<string, string>>;
}

/**
 * Reads one of a fixed set of words. An unknown word is an issue naming the expected words, with a
 * did-you-mean suggestion for typos (`alow` → `allow`).
 */
export function readEnum<T extends string>(
  ctx: ReadContext,
  scope: Scope,
  field: Field,
  shape: EnumShape<T>,
): T | undefined {
  const value = scalarValue(field.node);
  const expected = listWords(shape.values);
  if (typeof value !== "string") {
    reportType(ctx, scope, field, expected);
    return undefined;
  }
  if ((shape.values as readonly string[]).includes(value)) return value as T;
  const shown = showInput(value);
  const better = suggest(value, shape.values, shape.synonyms);
  const message = `${scope.prefix}unknown ${shape.noun} \`${shown}\` (expected ${expected})`;
  report(
    ctx,
    field.offset,
    shape.code,
    field.path,
    message,
    better !== undefined ? `did you mean \`${better}\`` : undefined,
  );
  return undefined;
}

/** Reads a string that is an exact name or a glob (`send_*`), checked with `compileGlob`. */
export function readGlob(ctx: ReadContext, scope: Scope, field: Field): string | undefined {
  const pattern = readString(ctx, scope, field, 'quote names and patterns, like `"send_*"`');
  if (pattern === undefined) return undefined;
  const unreadable = findUnreadableName(pattern);
  if (unreadable !== undefined) {
    const message = `${scope.prefix}\`${showInput(field.name)}\`: a name never holds ${unreadable}`;
    report(
      ctx,
      field.offset,
      "invalid_glob",
      field.path,
      message,
      "retype it: it was probably pasted with a hidden character",
    );
    return undefined;
  }
  return checkGlob(ctx, scope, field, pattern) ? pattern : undefined;
}

/** Reports an `invalid_glob` issue unless `pattern` compiles. */
export function checkGlob(ctx: ReadContext, scope: Scope, field: Field, pattern: string): boolean {
  const compiled = compileGlob(pattern);
  if (compiled.ok) return true;
  for (const issue of compiled.issues) {
    const reason = issue.message.split(pattern).join(showInput(pattern));
    const message = `${scope.prefix}\`${showInput(field.name)}\`: ${reason}`;
    const help = "globs use `*`, `?`, `[abc]` and `{a,b}`; brackets must be balanced";
    report(ctx, field.offset, "invalid_glob", field.path, message, issue.help ?? help);
  }
  return false;
}

/** Whether a field is a YAML null (`match:` with nothing after it): empty, for mapping- and list-valued keys. */
export function isNullField(field: Field): boolean {
  return scalarValue(field.node) === null;
}

/** Whether a field holds a mapping. */
export function isMapField(field: Field): boolean {
  return field.node !== null && isMap(field.node);
}
