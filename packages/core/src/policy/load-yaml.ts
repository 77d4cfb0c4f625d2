import { Composer, LineCounter, Parser, type CST, type Document, type YAMLError } from "yaml";
import { yamlErrorPlace, type Issue } from "../issues/index.js";
import { MAX_POLICY_BYTES, MAX_POLICY_DEPTH, MAX_POLICY_VALUES } from "./limits.js";
import { findTooManyNodes } from "./node-count.js";
import { findTooDeepToken, scanForNestingBomb } from "./nesting-depth.js";
import { positionAt } from "./source-position.js";

/** The one YAML document of a policy file, with what maps offsets to lines. */
export interface LoadedYaml {
  /** `undefined` when the text holds no document at all (empty or only comments). */
  readonly doc: Document.Parsed | undefined;
  readonly lines: LineCounter;
}

/** Loading either yields the document or the issues that stopped it (size, depth, syntax). */
export type LoadResult =
  { readonly ok: true; readonly value: LoadedYaml } | { readonly ok: false; readonly issues: Issue[] };

/** UTF-8 length of `text`, counting only as far as needed to know whether it exceeds `limit`. */
export function utf8Length(text: string, limit = Infinity): number {
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= limit; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function issueAt(lines: LineCounter, offset: number, code: string, message: string, help?: string): Issue {
  return { code, path: [], message, ...positionAt(lines, offset), ...(help !== undefined ? { help } : {}) };
}

function tooDeep(lines: LineCounter, offset: number): Issue {
  return issueAt(lines, offset, "policy_too_deep", `nesting deeper than ${MAX_POLICY_DEPTH} levels`);
}

function yamlIssue(lines: LineCounter, error: YAMLError, warning: boolean, source: readonly string[]): Issue {
  const text = error.message.replace(/\s+/g, " ").trim().replace(/\.$/, "");
  const message = text.length > 0 ? text[0]?.toLowerCase() + text.slice(1) : "malformed yaml";
  const prefix = warning ? "unsupported yaml" : "yaml syntax error";
  const at = positionAt(lines, error.pos[0]);
  const { hint, ...place } = yamlErrorPlace(source, error.code, at.line, at.column);
  return { ...issueAt(lines, error.pos[0], "yaml_syntax_error", `${prefix}: ${message}`, hint), ...place };
}

/**
 * Reads policy text as exactly one YAML 1.2 document (core schema). Refuses, with issues and before the
 * recursive composer runs: text over {@link MAX_POLICY_BYTES}, nesting over {@link MAX_POLICY_DEPTH}, and
 * (before the syntax tree is built) more than {@link MAX_POLICY_VALUES} values.
 * Then reports every YAML syntax error, and more than one document. Duplicate keys are left to the reader,
 * which names them better.
 */
export function loadPolicyYaml(text: string): LoadResult {
  const lines = new LineCounter();
  if (
    text.length > MAX_POLICY_BYTES ||
    (text.length * 3 > MAX_POLICY_BYTES && utf8Length(text, MAX_POLICY_BYTES) > MAX_POLICY_BYTES)
  ) {
    const issue = issueAt(lines, 0, "policy_too_large", `policy is larger than ${MAX_POLICY_BYTES} bytes (10 MiB)`);
    return { ok: false, issues: [{ ...issue, help: "split it or remove unused rules" }] };
  }
  const bomb = scanForNestingBomb(text);
  if (bomb !== undefined) {
    lines.addNewLine(0); // the first line's start, which the parser would add
    for (let i = text.indexOf("\n"); i !== -1 && i < bomb; i = text.indexOf("\n", i + 1)) lines.addNewLine(i + 1);
    return { ok: false, issues: [tooDeep(lines, bomb)] };
  }
  // each value takes at least one character: a shorter text cannot hold too many
  const crowded = text.length > MAX_POLICY_VALUES ? findTooManyNodes(text, MAX_POLICY_VALUES) : undefined;
  if (crowded !== undefined) {
    lines.addNewLine(0);
    for (let i = text.indexOf("\n"); i !== -1 && i < crowded; i = text.indexOf("\n", i + 1)) lines.addNewLine(i + 1);
    const message = `the policy holds more than ${MAX_POLICY_VALUES} yaml values (keys, values, lists and mappings)`;
    const issue = issueAt(lines, crowded, "too_many_values", message, "split it or remove unused rules");
    return { ok: false, issues: [issue] };
  }
  const tokens: CST.Token[] = Array.from(new Parser(lines.addNewLine).parse(text));
  for (const token of tokens) {
    const deep = findTooDeepToken(token, MAX_POLICY_DEPTH);
    if (deep !== undefined) return { ok: false, issues: [tooDeep(lines, deep)] };
  }
  const composer = new Composer({
    version: "1.2",
    schema: "core",
    prettyErrors: false,
    uniqueKeys: false,
    strict: true,
  });
  const docs: Document.Parsed[] = Array.from(composer.compose(tokens));
  const issues: Issue[] = [];
  const info = composer.streamInfo();
  // split once, and only when there is an error to name a line for
  let split: readonly string[] | undefined;
  const source = (): readonly string[] => (split ??= text.split("\n"));
  for (const error of info.errors) issues.push(yamlIssue(lines, error, false, source()));
  for (const doc of docs) {
    for (const error of doc.errors) issues.push(yamlIssue(lines, error, false, source()));
    for (const warning of doc.warnings) issues.push(yamlIssue(lines, warning, true, source()));
  }
  const second = docs[1];
  if (second !== undefined) {
    const start = second.range[0];
    issues.push(
      issueAt(
        lines,
        start,
        "multiple_documents",
        `the file holds ${docs.length} yaml documents, a policy is one`,
        "remove the `---` separator and what follows it",
      ),
    );
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: { doc: docs[0], lines } };
}
