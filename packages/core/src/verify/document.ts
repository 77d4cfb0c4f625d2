/**
 * Reads an intent or session-settings document (JSON or YAML) keeping positions, so that every problem found
 * later — by the schema, the settings parser or the consistency check — can name a line and a column.
 */
import { isNode, LineCounter, parseDocument } from "yaml";
import { yamlErrorMessage, yamlErrorPosition, type Issue, type Result } from "../issues/index.js";

/** A parsed document and a way back from a path to its place in the text. */
export interface PositionedDocument {
  readonly value: unknown;
  /** The 1-based line and column of the node at `path` (or of its nearest ancestor), when known. */
  locate(path: readonly (string | number)[]): { line?: number; column?: number };
}

/** Parses JSON or YAML; a syntax error is a `verify_malformed_document` issue with its line and column. */
export function parsePositionedDocument(text: string, what: string): Result<PositionedDocument> {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const error = doc.errors[0];
  if (error !== undefined) {
    const issue: Issue = {
      code: "verify_malformed_document",
      path: [],
      message: `invalid ${what}: not JSON or YAML: ${yamlErrorMessage(error)}`,
      ...yamlErrorPosition(error),
    };
    return { ok: false, issues: [issue] };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    const message = `invalid ${what}: ${err instanceof Error ? err.message : String(err)}`;
    return { ok: false, issues: [{ code: "verify_malformed_document", path: [], message }] };
  }
  const locate = (path: readonly (string | number)[]): { line?: number; column?: number } => {
    for (let n = path.length; n >= 0; n--) {
      const node: unknown = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range !== undefined && node.range !== null) {
        const pos = lines.linePos(node.range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
    return {};
  };
  return { ok: true, value: { value, locate } };
}

/** Adds a line and column to every issue that has none, from its path in the document. */
export function positionIssues(issues: readonly Issue[], doc: PositionedDocument): Issue[] {
  return issues.map((issue) => (issue.line !== undefined ? issue : { ...issue, ...doc.locate(issue.path) }));
}
