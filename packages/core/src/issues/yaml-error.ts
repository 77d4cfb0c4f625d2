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

/**
 * A `yaml` library error as `FILE:LINE:COL: message` (`FILE: message` when the error has no position),
 * `what` (like `not YAML or JSON`) put before the message when given.
 */
export function yamlErrorText(file: string, err: unknown, what?: string): string {
  const pos = positionOf(err);
  const where = pos === undefined ? file : `${file}:${pos.line}:${pos.col}`;
  return `${where}: ${what === undefined ? "" : `${what}: `}${yamlErrorMessage(err)}`;
}

/** Where a `yaml` library error starts (1-based `line` and `column`), when it says. */
export function yamlErrorPosition(err: unknown): { line: number; column: number } | undefined {
  const pos = positionOf(err);
  return pos === undefined ? undefined : { line: pos.line, column: pos.col };
}
