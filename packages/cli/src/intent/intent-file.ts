import { LineCounter, isCollection, parseDocument, type Node } from "yaml";
import { compileIntent, yamlErrorMessage, type CompiledIntent, type Issue } from "@acp/core";

/** An intent read from text: the document as written (a mapping) and its compiled form, or every problem. */
export type IntentFileResult =
  | { readonly ok: true; readonly intent: Record<string, unknown>; readonly compiled: CompiledIntent }
  | { readonly ok: false; readonly issues: readonly Issue[] };

/** Largest intent file read. */
export const MAX_INTENT_FILE_BYTES = 256 * 1024;

function locate(doc: ReturnType<typeof parseDocument>, lines: LineCounter, issue: Issue): Issue {
  if (issue.line !== undefined) return issue;
  let node: unknown = doc.contents;
  for (const key of issue.path) {
    if (!isCollection(node)) break;
    const next = node.get(key, true) as unknown;
    if (next === undefined) break;
    node = next;
  }
  const range = (node as Node | null)?.range;
  if (range === undefined || range === null) return issue;
  const pos = lines.linePos(range[0]);
  return { ...issue, line: pos.line, column: pos.col };
}

/**
 * Every issue about a YAML or JSON text with the line and column of the value it is about (its `path`),
 * so that `formatIssue(issue, file)` prints `FILE:LINE:COL: message`; issues that have one keep it.
 */
export function locateIssues(text: string, issues: readonly Issue[]): Issue[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  return issues.map((i) => locate(doc, lines, i));
}

/**
 * Parses an intent (YAML or JSON) and validates it with the core's `compileIntent`. Every issue carries the
 * line and column of the value it is about, so `formatIssue(issue, file)` prints `FILE:LINE:COL: message`.
 */
export function readIntentText(text: string): IntentFileResult {
  if (text.length > MAX_INTENT_FILE_BYTES)
    return {
      ok: false,
      issues: [
        { code: "intent_schema_violation", path: [], message: `an intent is at most ${MAX_INTENT_FILE_BYTES} bytes` },
      ],
    };
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax !== undefined) {
    const pos = syntax.linePos?.[0];
    const where = pos !== undefined ? { line: pos.line, column: pos.col } : {};
    return {
      ok: false,
      issues: [
        {
          code: "intent_schema_violation",
          path: [],
          message: `not YAML or JSON: ${yamlErrorMessage(syntax)}`,
          ...where,
        },
      ],
    };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    return {
      ok: false,
      issues: [
        {
          code: "intent_schema_violation",
          path: [],
          message: `not readable: ${err instanceof Error ? err.message : String(err)}`,
        },
      ],
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return {
      ok: false,
      issues: [
        {
          code: "intent_schema_violation",
          path: [],
          message: "an intent is a mapping (YAML or JSON object)",
          line: 1,
          column: 1,
        },
      ],
    };
  const compiled = compileIntent(value);
  if (!compiled.ok) return { ok: false, issues: compiled.issues.map((i) => locate(doc, lines, i)) };
  return { ok: true, intent: value as Record<string, unknown>, compiled: compiled.value };
}
