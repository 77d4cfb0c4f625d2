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
/** A line (its comment cut off) that reads `key value` with no `:` at all, a sequence item's `- key value` too. */
const KEY_WITHOUT_COLON = /^\s*(?:-\s+)?([A-Za-z_][A-Za-z0-9_-]*)[ \t]+[^\s#:][^:]*$/;

/** How far above the error line a key without its `:` is looked for, and the longest line read. */
const HINT_LINES = 200;
const HINT_LINE_LENGTH = 400;

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
    const raw = lines[n - 1] ?? "";
    if (raw.length > HINT_LINE_LENGTH) return undefined;
    const content = raw.replace(/(^|\s)#.*$/, "").trimEnd();
    if (content.trim() === "") continue;
    const key = KEY_WITHOUT_COLON.exec(content)?.[1];
    if (key !== undefined) return `is a \`:\` missing after \`${key}\` on line ${n}?`;
    if (n < line) return undefined;
  }
  return undefined;
}

/**
 * A `yaml` library error as `FILE:LINE:COL: message` (`FILE: message` when the error has no position),
 * `what` (like `not YAML or JSON`) put before the message when given. With the `source` text, a key
 * written without its `:` is named after the message ({@link missingColonHint}).
 */
export function yamlErrorText(file: string, err: unknown, what?: string, source?: string): string {
  const pos = positionOf(err);
  const where = pos === undefined ? file : `${file}:${pos.line}:${pos.col}`;
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  const hint = source === undefined || pos === undefined ? undefined : missingColonHint(source, code, pos.line);
  return `${where}: ${what === undefined ? "" : `${what}: `}${yamlErrorMessage(err)}${hint === undefined ? "" : ` (${hint})`}`;
}

/** Where a `yaml` library error starts (1-based `line` and `column`), when it says. */
export function yamlErrorPosition(err: unknown): { line: number; column: number } | undefined {
  const pos = positionOf(err);
  return pos === undefined ? undefined : { line: pos.line, column: pos.col };
}
