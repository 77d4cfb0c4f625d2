/**
 * `parseConsentGraph`: JSON text in, a deeply frozen `ConsentGraph` or issues out. Never throws.
 */
import type { Issue, Result } from "../issues/index.js";
import { ValidationError } from "../issues/index.js";
import { readJson, type PositionedJson } from "./json-source.js";
import type { ConsentGraph } from "./types.js";
import { MAX_ACTIONS_PER_LIST, validateConsentGraph } from "./validate.js";

/** Largest graph text accepted: 5 MiB worth of characters. */
export const MAX_GRAPH_LENGTH = 5 * 1024 * 1024;
/** Deepest nesting accepted (the format needs 3). */
export const MAX_GRAPH_DEPTH = 32;

/** Options for `parseConsentGraph`. */
export interface ParseConsentGraphOptions {
  /** The file name, used in issue messages only through `formatIssue(issue, file)`. */
  readonly file?: string;
}

/** Reads graph text as positioned JSON (the first stage of parsing; also used by lint). */
export function readConsentGraphJson(text: string): Result<PositionedJson> {
  if (typeof text !== "string") {
    return { ok: false, issues: [{ code: "invalid_type", path: [], message: "a consent graph must be JSON text" }] };
  }
  // no array longer than one action list is valid anywhere in a graph: stop reading at the first item past it
  return readJson(text, { maxLength: MAX_GRAPH_LENGTH, maxDepth: MAX_GRAPH_DEPTH, maxItems: MAX_ACTIONS_PER_LIST });
}

/**
 * Parses consent-graph JSON. Syntax errors carry line and column; wrong types, unknown keys (with a
 * suggestion), absurd sizes and deep nesting are issues. The graph comes back deeply frozen.
 */
export function parseConsentGraph(text: string, options: ParseConsentGraphOptions = {}): Result<ConsentGraph> {
  void options.file;
  try {
    const json = readConsentGraphJson(text);
    if (!json.ok) return json;
    return validateConsentGraph(json.value.value, json.value.positions);
  } catch (err) {
    const message = `internal error while reading the graph: ${err instanceof Error ? err.message : String(err)}`;
    const issue: Issue = { code: "graph_error", path: [], message };
    return { ok: false, issues: [issue] };
  }
}

/** Like `parseConsentGraph`, but throws a `ValidationError` carrying the issues. */
export function assertConsentGraph(text: string, options: ParseConsentGraphOptions = {}): ConsentGraph {
  const result = parseConsentGraph(text, options);
  if (!result.ok) throw new ValidationError(options.file ?? "consent graph", result.issues);
  return result.value;
}
