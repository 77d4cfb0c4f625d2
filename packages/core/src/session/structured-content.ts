/**
 * Structure in tool results. Many tools answer with records (JSON, or YAML as AgentDojo-style tools print):
 * a channel list, a contact card, an event with its participants, an e-mail with its sender. Two provenance
 * rules read that structure instead of the flat text:
 *
 * - a *directory* (a tool the deployment names, such as the workspace's channel and member lists or the
 *   address book) vouches for a value only when the value is one whole entry of its answer — never for text
 *   inside an entry, so an injected sentence inside a channel name vouches for nothing;
 * - a *record the user named* (an event titled `Introductory meeting` when the user typed that title) vouches
 *   for the identifiers that are whole fields of that record (its participants, its sender), never for
 *   identifiers inside its free text (a description, a body).
 */
import { parse as parseYaml } from "yaml";
import { extractValueTokens, normalizeText } from "./value-tokens.js";

/** Longest content parsed for structure; longer content is treated as flat text. */
export const MAX_STRUCTURED_CHARS = 256_000;
/** Longest scalar kept as a directory entry or a record's name. */
export const MAX_ITEM_CHARS = 256;
/** Shortest field value that can name a record (shorter ones, `Lunch`, name too many). */
export const MIN_RECORD_NAME_CHARS = 8;
/** Most records and entries kept from one result. */
export const MAX_ITEMS = 10_000;
/**
 * Most fields that can name one record (an e-mail has a subject and a body, an event a title, a description and
 * a place). A record with more is a list of phrases, not a thing with a title: it names nothing, so that an
 * attacker cannot fill one record with every phrase a user might type beside the address they want trusted.
 */
export const MAX_RECORD_NAMES = 10;

/** One record of a structured result: the fields that can name it and the identifiers that are whole fields. */
export interface StructuredRecord {
  /** Short field values that can name the record (normal form): at least two words or a file-like name. */
  readonly names: readonly string[];
  /** Whole-field identifiers (e-mail, IBAN, phone, URL, account), in token normal form, `kind:value`. */
  readonly identities: readonly string[];
}

/** What provenance keeps of a structured result. */
export interface StructuredContent {
  /** Scalar leaves (normal form) with the key they sit under (`""` for a top-level list or scalar). */
  readonly leaves: readonly { readonly key: string; readonly value: string }[];
  readonly records: readonly StructuredRecord[];
}

/** The options every result is read with (also what {@link readPlainYaml} must agree with). */
export const STRUCTURE_YAML_OPTIONS = Object.freeze({
  maxAliasCount: 0,
  uniqueKeys: false,
  prettyErrors: false,
  logLevel: "silent",
} as const);

function tryParse(content: unknown): unknown {
  if (typeof content !== "string") return content;
  if (content.length > MAX_STRUCTURED_CHARS) return undefined;
  const text = content.trim();
  if (text.startsWith("{") || text.startsWith("[")) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // not JSON; YAML below also reads flow mappings such as a Python dict's repr
    }
  }
  // most results are plain lines or `key: value` lines: read those without the YAML parser (same value)
  const plain = readPlainYaml(text);
  if (plain !== undefined) return plain.value;
  try {
    return parseYaml(text, STRUCTURE_YAML_OPTIONS) as unknown;
  } catch {
    return undefined;
  }
}

// The plain subset of YAML read without the parser. Only letters, digits, punctuation, symbols, spaces and
// line feeds; no tab, carriage return, other white space or control character.
const PLAIN_CHARS = /^[\p{L}\p{N}\p{P}\p{S} \n]*$/u;
/** A key: a letter, then letters, digits, `_`, `-` and single inner spaces; at most 256 characters. */
const PLAIN_KEY = /^\p{L}(?:[\p{L}\p{N}_-]| (?=[\p{L}\p{N}_-]))*$/u;
/** A `key: value` line: the key, `: `, the value (spaces around it dropped). */
const KEY_LINE = /^([^:]*): +(.*)$/su;
/** How a plain scalar may start: a letter, a digit, or one of `( / $ _ < = ^ ;`. */
const PLAIN_START = /^[\p{L}\p{N}(/$_<=^;]/u;
/** Words the core schema reads as null or booleans. */
const WORDS = new Map<string, null | boolean>([
  ["null", null],
  ["Null", null],
  ["NULL", null],
  ["true", true],
  ["True", true],
  ["TRUE", true],
  ["false", false],
  ["False", false],
  ["FALSE", false],
]);
const INT = /^[0-9]+$/;
const FLOAT = /^[0-9]+\.[0-9]*$/;
const EXP = /^[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+$/;
const OCT = /^0o[0-7]+$/;
const HEX = /^0x[0-9a-fA-F]+$/;

/** A one-line plain scalar as the core schema reads it (number, boolean, null or string). */
function plainScalar(text: string): unknown {
  const word = WORDS.get(text);
  if (word !== undefined) return word;
  if (INT.test(text)) return parseInt(text, 10);
  if (FLOAT.test(text) || EXP.test(text)) return parseFloat(text);
  if (OCT.test(text)) return parseInt(text.slice(2), 8);
  if (HEX.test(text)) return parseInt(text.slice(2), 16);
  return text;
}

/** Whether a line's text can sit in a plain scalar: no comment, no `: ` and no `:` at its end. */
function plainText(line: string): boolean {
  return !line.includes(" #") && !line.includes(": ") && !line.endsWith(":") && PLAIN_START.test(line);
}

/** `key: value` lines at the left margin, blank lines between them allowed; undefined when not only that. */
function plainMapping(lines: readonly string[]): Record<string, unknown> | undefined {
  const map: Record<string, unknown> = {};
  for (const line of lines) {
    if (line === "") continue;
    const match = KEY_LINE.exec(line);
    if (match === null) return undefined;
    const key = match[1] as string;
    const value = (match[2] as string).replace(/ +$/, "");
    if (key.length > MAX_ITEM_CHARS || !PLAIN_KEY.test(key) || WORDS.has(key)) return undefined;
    if (!plainText(value)) return undefined;
    map[key] = plainScalar(value);
  }
  return map;
}

/** Lines of one plain scalar: folded as YAML folds them (a line break is a space, a blank line a `\n`). */
function plainLines(lines: readonly string[]): unknown {
  let out = "";
  let blanks = 0;
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "") {
      blanks++;
      continue;
    }
    if (!plainText(line) || (i > 0 && /^[-.]/.test(line))) return undefined;
    out += i === 0 ? line : blanks > 0 ? "\n".repeat(blanks) + line : ` ${line}`;
    blanks = 0;
  }
  return lines.length === 1 ? plainScalar(out) : out;
}

/**
 * Reads trimmed text that is plain YAML — one or more lines of a plain scalar, or `key: value` lines at the
 * left margin whose keys start with a letter and whose values are one-line plain scalars — to the value
 * `yaml.parse` gives it with {@link STRUCTURE_YAML_OPTIONS} (a property test holds them equal). Undefined
 * for anything else (the parser reads it).
 */
export function readPlainYaml(text: string): { readonly value: unknown } | undefined {
  if (text === "" || !PLAIN_CHARS.test(text)) return undefined;
  const lines = text.split("\n");
  if (lines[0]?.includes(": ") === true) {
    const map = plainMapping(lines);
    return map === undefined ? undefined : { value: map };
  }
  const value = plainLines(lines);
  return value === undefined ? undefined : { value };
}

function scalarText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** The identifier a whole scalar is (`email:a@b.example`), or undefined when it is anything else. */
export function wholeIdentity(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_ITEM_CHARS) return undefined;
  const tokens = extractValueTokens(trimmed).filter((t) => t.kind !== "host");
  if (tokens.length !== 1) return undefined;
  const token = tokens[0] as { kind: string; value: string };
  const plain =
    token.kind === "iban"
      ? trimmed.replace(/ /g, "").toUpperCase()
      : token.kind === "phone"
        ? trimmed.replace(/[\s().+-]/g, "")
        : normalizeText(trimmed);
  return plain === token.value ? `${token.kind}:${token.value}` : undefined;
}

function canName(value: string): boolean {
  if (value.length < MIN_RECORD_NAME_CHARS || value.length > MAX_ITEM_CHARS || !/\p{L}/u.test(value)) return false;
  return /\s/.test(value.trim()) || /^[\p{L}\p{N}_-]+\.[\p{L}\p{N}]{2,5}$/u.test(value.trim());
}

function recordOf(map: Record<string, unknown>): StructuredRecord {
  const names: string[] = [];
  const identities: string[] = [];
  for (const field of Object.values(map)) {
    const items = Array.isArray(field) ? field : [field];
    for (const item of items) {
      const text = scalarText(item);
      if (text === undefined) continue;
      const identity = wholeIdentity(text);
      if (identity !== undefined) identities.push(identity);
      else if (!Array.isArray(field) && canName(text)) names.push(normalizeText(text).trim());
    }
  }
  return { names: names.length > MAX_RECORD_NAMES ? [] : names, identities };
}

/**
 * Reads the structure of a tool result: its scalar leaves and its records. Returns undefined when the content
 * is not structured (it does not parse, or it is a single scalar longer than {@link MAX_ITEM_CHARS}).
 */
export function readStructure(content: unknown): StructuredContent | undefined {
  return readStructureOf(content, true);
}

/**
 * The records of a tool result, as {@link readStructure} reads them (undefined when it reads none): what a
 * result of no directory keeps, without the normal form of every leaf, which only a directory's answer keeps.
 */
export function readRecords(content: unknown): readonly StructuredRecord[] | undefined {
  return readStructureOf(content, false)?.records;
}

/** {@link readStructure}; without `keepLeaves` the leaves are counted (they bound the reading) but not kept. */
function readStructureOf(content: unknown, keepLeaves: boolean): StructuredContent | undefined {
  const root = tryParse(content);
  if (root === undefined || root === null) return undefined;
  if (typeof root !== "object" && (scalarText(root) ?? "").length > MAX_ITEM_CHARS) return undefined;
  const leaves: { key: string; value: string }[] = [];
  let leafCount = 0;
  const records: StructuredRecord[] = [];
  const stack: { node: unknown; key: string }[] = [{ node: root, key: "" }];
  while (stack.length > 0 && leafCount < MAX_ITEMS && records.length < MAX_ITEMS) {
    const { node, key } = stack.pop() as { node: unknown; key: string };
    const text = scalarText(node);
    if (text !== undefined) {
      if (text.length <= MAX_ITEM_CHARS) {
        leafCount++;
        if (keepLeaves) leaves.push({ key, value: normalizeText(text).trim() });
      }
    } else if (Array.isArray(node)) {
      for (const child of node) stack.push({ node: child, key });
    } else if (typeof node === "object" && node !== null) {
      const map = node as Record<string, unknown>;
      records.push(recordOf(map));
      for (const [childKey, child] of Object.entries(map)) stack.push({ node: child, key: childKey });
    }
  }
  return { leaves, records };
}

/**
 * The entries of a directory answer: its scalar leaves, only those under one of `fields` when given (the
 * `sender` of a message, the `email` of a contact), in normal form.
 */
export function directoryEntries(structure: StructuredContent, fields?: readonly string[]): ReadonlySet<string> {
  const keep = fields === undefined || fields.length === 0 ? undefined : new Set(fields);
  const out = new Set<string>();
  for (const leaf of structure.leaves) {
    if (leaf.value.length > 0 && (keep === undefined || keep.has(leaf.key))) out.add(leaf.value);
  }
  return out;
}
