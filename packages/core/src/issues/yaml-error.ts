/** What `yaml` puts on its errors: the first entry of `linePos` is where the problem starts (1-based). */
interface YamlErrorLike {
  readonly message: string;
  readonly linePos?: readonly { readonly line: number; readonly col: number }[];
}

function positionOf(err: unknown): { line: number; col: number } | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const pos = (err as YamlErrorLike).linePos?.[0];
  return pos !== undefined && Number.isInteger(pos.line) && Number.isInteger(pos.col) ? pos : undefined;
}

/**
 * The message of a `yaml` library error in house style (one line, lowercase start, no final period),
 * without the ` at line L, column C:` and source snippet its pretty form appends. Any other error: its
 * first line, likewise.
 */
export function yamlErrorMessage(err: unknown): string {
  const raw = typeof err === "object" && err !== null && "message" in err ? String(err.message) : String(err);
  const bare = raw.replace(/ at line \d+, column \d+(?::\n[\s\S]*|:?\s*)$/, "");
  const line = (bare.split("\n")[0] ?? "").replace(/\s+/g, " ").trim().replace(/\.$/, "");
  if (line === "") return "malformed yaml";
  // `Map keys …` → `map keys …`; an acronym (`YAML …`) stays as it is
  return /^[A-Z][^A-Z]/.test(line) ? line[0]?.toLowerCase() + line.slice(1) : line;
}

/** The `yaml` error codes a key written without its `:` (`port 8443`) ends in, at that line or a later one. */
const MISSING_COLON_CODES: ReadonlySet<string> = new Set(["MISSING_CHAR", "MULTILINE_IMPLICIT_KEY", "BAD_INDENT"]);
/**
 * The codes of errors about the structure of lines (indentation, keys) that the `yaml` library may place at
 * the start of the blank or comment lines before the line at fault, or in the indentation before its key.
 */
const LINE_STRUCTURE_CODES: ReadonlySet<string> = new Set([...MISSING_COLON_CODES, "BLOCK_AS_IMPLICIT_KEY"]);
/** A line (its comment cut off) that reads `key value` with no `:` at all, a sequence item's `- key value` too. */
const KEY_WITHOUT_COLON = /^\s*(?:-\s+)?([A-Za-z_][A-Za-z0-9_-]*)[ \t]+[^\s#:][^:]*$/;
/** A line that reads `key: value` (a value after the `:`, so not the head of a nested mapping). */
const KEY_WITH_VALUE = /^(\s*)([A-Za-z_][A-Za-z0-9_-]*):[ \t]+[^\s#]/;

/** How far from the error line a line is looked for, and the longest line read. */
const HINT_LINES = 200;
const HINT_LINE_LENGTH = 400;

/** A line's text without its comment, or `undefined` when it is too long to read. */
function contentOf(lines: readonly string[], n: number): string | undefined {
  const raw = lines[n - 1] ?? "";
  return raw.length > HINT_LINE_LENGTH ? undefined : raw.replace(/(^|\s)#.*$/, "").trimEnd();
}

/** The 1-based column of a line's first character that is not a space. */
function firstColumn(content: string): number {
  return content.length - content.trimStart().length + 1;
}

/**
 * What the `yaml` library cannot say about a key written without its `:`: its errors (`implicit map keys
 * need to be followed by map values`, or `all mapping items must start at the same column` at the next key,
 * comment lines later) name the grammar, not the mistake. Given the error's code and line, the hint names
 * the line that reads `key value` (the error's own, else the first line above it that is not blank or a
 * comment), or `undefined` when there is none. `source` is the text, or its lines (split once, for many
 * errors of one text).
 */
export function missingColonHint(source: string | readonly string[], code: unknown, line: number): string | undefined {
  if (typeof code !== "string" || !MISSING_COLON_CODES.has(code)) return undefined;
  const lines = typeof source === "string" ? source.split("\n") : source;
  for (let n = line; n >= 1 && n > line - HINT_LINES; n--) {
    const content = contentOf(lines, n);
    if (content === undefined) return undefined;
    if (content.trim() === "") continue;
    const key = KEY_WITHOUT_COLON.exec(content)?.[1];
    if (key !== undefined) return `is a \`:\` missing after \`${key}\` on line ${n}?`;
    if (n < line) return undefined;
  }
  return undefined;
}

/**
 * `all mapping items must start at the same column` for a key indented deeper than the `key: value` line
 * before it (an uncommented example that kept the spaces after its `#`): both columns, named.
 */
function indentHint(lines: readonly string[], line: number): string | undefined {
  const at = contentOf(lines, line);
  const key = at === undefined ? undefined : /^\s*(?:-\s+)?([A-Za-z_][A-Za-z0-9_-]*)/.exec(at)?.[1];
  if (at === undefined || key === undefined) return undefined;
  for (let n = line - 1; n >= 1 && n > line - HINT_LINES; n--) {
    const content = contentOf(lines, n);
    if (content === undefined) return undefined;
    if (content.trim() === "") continue;
    const before = KEY_WITH_VALUE.exec(content);
    if (before === undefined || before === null || firstColumn(content) >= firstColumn(at)) return undefined;
    return `\`${key}\` starts at column ${firstColumn(at)}, \`${before[2] ?? ""}\` on line ${n} at column ${firstColumn(content)}: the keys of one mapping start at the same column`;
  }
  return undefined;
}

/**
 * A key indented deeper than the `key: value` line before it: the `yaml` library reports it at that line's
 * value (`nested mappings are not allowed in compact mappings`). The deeper key's place, with both columns.
 */
function deeperKeyAfter(
  lines: readonly string[],
  line: number,
  column: number,
): { line: number; column: number; hint: string } | undefined {
  const at = contentOf(lines, line);
  const before = at === undefined ? null : KEY_WITH_VALUE.exec(at);
  if (at === undefined || before === null) return undefined;
  const key = before[2] ?? "";
  const keyColumn = firstColumn(at);
  if (column <= keyColumn + key.length) return undefined;
  for (let n = line + 1; n <= lines.length && n < line + HINT_LINES; n++) {
    const content = contentOf(lines, n);
    if (content === undefined) return undefined;
    if (content.trim() === "") continue;
    const deeper = /^\s*([A-Za-z_][A-Za-z0-9_-]*):/.exec(content)?.[1];
    const first = firstColumn(content);
    if (deeper === undefined || first <= keyColumn) return undefined;
    const hint = `\`${deeper}\` starts at column ${first}, \`${key}\` on line ${line} at column ${keyColumn}: the keys of one mapping start at the same column`;
    return { line: n, column: first, hint };
  }
  return undefined;
}

/**
 * Where a reader should look for a `yaml` library error, and a hint when the library's message names the
 * grammar rather than the mistake. An error about the structure of lines that the library placed on a blank
 * or comment line (the start of the comments before the line at fault), or in a line's indentation, is moved
 * to the first character of the next line with content; then {@link missingColonHint}, else for a mis-indented
 * key the two columns. Lines are 1-based, as `line` and `column` are.
 */
export function yamlErrorPlace(
  source: string | readonly string[],
  code: unknown,
  line: number,
  column: number,
): { line: number; column: number; hint?: string } {
  if (typeof code !== "string" || !LINE_STRUCTURE_CODES.has(code)) return { line, column };
  const lines = typeof source === "string" ? source.split("\n") : source;
  let place = { line, column };
  for (let n = line; n <= lines.length && n < line + HINT_LINES; n++) {
    const content = contentOf(lines, n);
    if (content === undefined) break;
    if (content.trim() === "") continue;
    const first = firstColumn(content);
    if (n > line || column < first) place = { line: n, column: n > line ? first : Math.max(column, first) };
    break;
  }
  if (code === "BLOCK_AS_IMPLICIT_KEY" || code === "MULTILINE_IMPLICIT_KEY") {
    const deeper = deeperKeyAfter(lines, place.line, place.column);
    if (deeper !== undefined) return deeper;
  }
  const hint =
    missingColonHint(lines, code, place.line) ?? (code === "BAD_INDENT" ? indentHint(lines, place.line) : undefined);
  return hint === undefined ? place : { ...place, hint };
}

/**
 * A `yaml` library error as `FILE:LINE:COL: message` (`FILE: message` when the error has no position),
 * `what` (like `not YAML or JSON`) put before the message when given. With the `source` text, the place is
 * the one a reader should look at, and a hint follows the message ({@link yamlErrorPlace}).
 */
export function yamlErrorText(file: string, err: unknown, what?: string, source?: string): string {
  const at = positionOf(err);
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  const place = source === undefined || at === undefined ? undefined : yamlErrorPlace(source, code, at.line, at.col);
  const where = at === undefined ? file : `${file}:${place?.line ?? at.line}:${place?.column ?? at.col}`;
  const hint = place?.hint === undefined ? "" : ` (${place.hint})`;
  return `${where}: ${what === undefined ? "" : `${what}: `}${yamlErrorMessage(err)}${hint}`;
}

/** Where a `yaml` library error starts (1-based `line` and `column`), when it says. */
export function yamlErrorPosition(err: unknown): { line: number; column: number } | undefined {
  const pos = positionOf(err);
  return pos === undefined ? undefined : { line: pos.line, column: pos.col };
}
