import { findLookAlike, findWholeScriptLookAlike, hasHiddenCharacters, printable } from "@acp/core";

/** How much of a request's arguments a channel shows. */
export interface ArgumentsViewLimits {
  /** The longest value shown whole (printable characters); a longer one shows its start and its end. */
  readonly maxValue: number;
  /** The most values shown, one a line; the rest are counted. */
  readonly maxLines: number;
  /** The most characters of all lines together (a message's budget); the values beyond are counted. */
  readonly maxChars?: number;
}

/** The arguments as a person is shown them. */
export interface ArgumentsView {
  /** One line per value (`path: value`, the value as JSON, printable), then what was left out, if anything. */
  readonly lines: readonly string[];
  /**
   * The values of {@link lines} (all but the count of those left out) as a path and a value, each printable and
   * shortened as there (the path `""` for arguments that are no object): for a channel that lays them out itself
   * (Telegram isolates each from the text around it), and `whole`, the value unshortened (printable JSON).
   */
  readonly items: readonly { readonly path: string; readonly value: string; readonly whole: string }[];
  /** The line counting the values left out (the last of {@link lines}), when any were. */
  readonly more?: string;
  /** Whether a key or a string holds a character shown escaped (a line break or tab inside a string aside). */
  readonly hidden: boolean;
  /** Whether anything was shortened or left out. */
  readonly shortened: boolean;
  /** The first look-alike letter in a key or a string (see {@link lookAlikeIn}). */
  readonly lookAlike?: LookAlike;
}

/** Deeper than this, the rest of a value is shown as one JSON value. */
const MAX_DEPTH = 16;
/** The longest path shown whole. */
const MAX_PATH = 80;
const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** The index nearest `at` (moving towards `towards`) that splits neither a surrogate pair nor a `\uXXXX` escape. */
function safeCut(text: string, at: number, towards: "start" | "end"): number {
  let cut = Math.max(0, Math.min(text.length, at));
  const step = towards === "start" ? -1 : 1;
  for (let guard = 0; guard < 8 && cut > 0 && cut < text.length; guard++) {
    const before = text.charCodeAt(cut - 1);
    const splitsPair = before >= 0xd800 && before <= 0xdbff;
    const back = text.lastIndexOf("\\u", cut - 1);
    const splitsEscape = back >= 0 && back > cut - 6 && /^\\u[0-9a-f]{4}/.test(text.slice(back, back + 6));
    if (!splitsPair && !splitsEscape) break;
    cut = splitsEscape && towards === "start" ? back : cut + step;
  }
  return cut;
}

/**
 * `text` (already printable) at most `max` characters: its start and its end with how much was left out
 * between them (`…[1234 characters not shown]…`), so neither end — where a decisive part (a recipient after
 * padding, a path's last component) can be put — is hidden.
 */
export function elide(text: string, max: number): string {
  if (text.length <= max) return text;
  const mark = (n: number): string => `…[${n} characters not shown]…`;
  const room = Math.max(2, max - mark(text.length).length);
  const head = safeCut(text, Math.ceil((room * 2) / 3), "start");
  const tail = safeCut(text, text.length - Math.floor(room / 3), "end");
  return `${text.slice(0, head)}${mark(tail - head)}${text.slice(tail)}`;
}

function pathOf(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  const segment = PLAIN_KEY.test(key) ? key : `[${JSON.stringify(key)}]`;
  return parent === "" ? segment : segment.startsWith("[") ? `${parent}${segment}` : `${parent}.${segment}`;
}

interface Leaf {
  readonly path: string;
  readonly value: unknown;
}

/** Every value to show (a scalar, an empty or too-deep object or array) with its path, in order. */
function* leavesOf(value: unknown, path: string, depth: number): Generator<Leaf> {
  const container = typeof value === "object" && value !== null;
  if (!container || depth >= MAX_DEPTH) {
    yield { path, value };
    return;
  }
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? (value as unknown[]).map((v, i): [number, unknown] => [i, v])
    : Object.entries(value);
  if (entries.length === 0) {
    yield { path, value };
    return;
  }
  for (const [key, inner] of entries) yield* leavesOf(inner, pathOf(path, key), depth + 1);
}

function anyHidden(value: unknown, depth = 0): boolean {
  if (typeof value === "string") return hasHiddenCharacters(value, true);
  if (typeof value !== "object" || value === null || depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) return value.some((v) => anyHidden(v, depth + 1));
  return Object.entries(value).some(([k, v]) => hasHiddenCharacters(k) || anyHidden(v, depth + 1));
}

/** Strings longer than this are not searched for look-alike letters (names and addresses are short). */
const MAX_LOOK_ALIKE_SCAN = 1024;

/** A look-alike letter or word, see {@link lookAlikeIn}. */
export interface LookAlike {
  /** The letter (or, with `script`, the word) that passes for what it is not. */
  readonly char: string;
  /** The ASCII text it reads as. */
  readonly reads: string;
  /**
   * Set for a word written wholly in another script whose every letter passes for a Latin one (`аррӏе`, all
   * Cyrillic, in `ceo@аррӏе.сом`): the script it is written in (`Cyrillic`, `Greek`, `several scripts`).
   */
  readonly script?: string;
}

/**
 * The first letter that passes for an ASCII one inside a Latin word of `text` (`а`, U+0430 CYRILLIC SMALL
 * LETTER A, in `аlice@corp.test`): a recipient or a name that reads as one it is not (`findLookAlike`, as the
 * policy uses it for tool names); else the first word written wholly in another script whose every letter
 * passes for a Latin one (`аррӏе` in `ceo@аррӏе.сом`: `findWholeScriptLookAlike`, which leaves ordinary text
 * of that script, `Ирина`, alone). Undefined when there is neither, or `text` is too long to search.
 */
export function lookAlikeIn(text: unknown): LookAlike | undefined {
  if (typeof text !== "string" || text.length > MAX_LOOK_ALIKE_SCAN) return undefined;
  const letter = findLookAlike(text);
  if (letter !== undefined) return letter;
  const word = findWholeScriptLookAlike(text);
  return word === undefined ? undefined : { char: word.word, reads: word.reads, script: word.script };
}

function anyLookAlike(value: unknown, depth = 0): LookAlike | undefined {
  if (typeof value === "string") return lookAlikeIn(value);
  if (typeof value !== "object" || value === null || depth > MAX_DEPTH) return undefined;
  for (const [key, inner] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const found = (typeof key === "string" ? lookAlikeIn(key) : undefined) ?? anyLookAlike(inner, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * What the warnings need of arguments a channel shows its own way (the console shows them whole, as indented
 * JSON): whether a key or a string holds a character shown escaped (a line break or tab inside a string aside),
 * and the first look-alike letter in a key or a string — as {@link argumentsView} finds them.
 */
export function argumentsCharacters(parameters: unknown): { readonly hidden: boolean; readonly lookAlike?: LookAlike } {
  const lookAlike = anyLookAlike(parameters);
  return { hidden: anyHidden(parameters), ...(lookAlike !== undefined ? { lookAlike } : {}) };
}

/**
 * The arguments of a request as a person reads them: one line per value, `path: value` (`to: "ana@x.test"`,
 * `message.cc[1]: "…"`), each value as JSON and printable, a long one cut in its middle with how much was left
 * out. One long value cannot push the others out of sight (nor out of a message's budget), and a nested
 * recipient gets its own line. Past `maxLines` (or `maxChars`) the values left are counted, never silently
 * dropped.
 */
export function argumentsView(parameters: Record<string, unknown>, limits: ArgumentsViewLimits): ArgumentsView {
  const lines: string[] = [];
  const items: { path: string; value: string; whole: string }[] = [];
  let chars = 0;
  let total = 0;
  let full = false;
  let shortened = false;
  for (const leaf of leavesOf(parameters, "", 0)) {
    total++;
    if (full || lines.length >= limits.maxLines) continue;
    const json = printable(JSON.stringify(leaf.value) ?? String(leaf.value));
    const path = printable(leaf.path);
    const shown = { value: elide(json, limits.maxValue), path: elide(path, MAX_PATH) };
    const line = shown.path === "" ? shown.value : `${shown.path}: ${shown.value}`;
    if (limits.maxChars !== undefined && chars + line.length + 1 > limits.maxChars) {
      full = true;
      continue;
    }
    if (shown.value !== json || shown.path !== path) shortened = true;
    chars += line.length + 1;
    lines.push(line);
    items.push({ ...shown, whole: json });
  }
  const left = total - lines.length;
  const more = left > 0 ? `… and ${left} more value${left === 1 ? "" : "s"} not shown (${total} in all)` : undefined;
  if (more !== undefined) lines.push(more);
  const lookAlike = anyLookAlike(parameters);
  return {
    lines,
    items,
    ...(more !== undefined ? { more } : {}),
    hidden: anyHidden(parameters),
    shortened: shortened || left > 0,
    ...(lookAlike !== undefined ? { lookAlike } : {}),
  };
}
