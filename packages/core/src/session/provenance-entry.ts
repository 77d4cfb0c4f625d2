/**
 * Provenance entries: every value entering a session is kept with a label and a source, as the text, tokens and
 * aliases `deriveProvenance` traces argument values to.
 */
import { detectInstructions, withHiddenText, type InstructionReport } from "./instruction-detector.js";
import { directoryEntries, readRecords, readStructure, type StructuredRecord } from "./structured-content.js";
import { textAliases, type TextAliases } from "./value-aliases.js";
import { comparableText, extractValueTokens, normalizeText } from "./value-tokens.js";

/** The three provenance labels. `system_policy` also covers results of servers configured as trusted. */
export const PROVENANCE_LABELS = ["system_policy", "user_input", "external_untrusted"] as const;

/** One provenance label. */
export type ProvenanceLabel = (typeof PROVENANCE_LABELS)[number];

/** One text that entered the session. */
export interface ProvenanceEntry {
  readonly label: ProvenanceLabel;
  /** Where it came from: `user#1`, `intent.trusted_values.recipients`, `calendar.read_events#3`. */
  readonly source: string;
  /** The text in normal form (lower case, white space collapsed), at most {@link MAX_ENTRY_CHARS}. */
  readonly text: string;
  /** `kind:value` of every identifier token in the text (those the session's room holds: else `truncated`). */
  readonly tokens: ReadonlySet<string>;
  /** The instruction scorer's report (untrusted entries only). */
  readonly instructions: InstructionReport | null;
  /**
   * Whether the text was cut to {@link MAX_ENTRY_CHARS} (or the session's room), some of its tokens or aliases
   * were not kept for want of room, or it could not be read at all.
   */
  readonly truncated: boolean;
  /** For a result of a configured directory: its whole entries (normal form); otherwise null. */
  readonly directory: ReadonlySet<string> | null;
  /** The records of a structured untrusted result (for `deriveProvenance`'s named-record rule). */
  readonly records: readonly StructuredRecord[];
  /** Whether the call that fetched this result carried an argument the user typed (a URL, a file name). */
  readonly named_source: boolean;
  /**
   * Pieces (normal form) of the arguments of the call that fetched this trusted or directory result which no
   * trusted source held then: the result may echo them, but does not vouch for them.
   */
  readonly echoes: ReadonlySet<string>;
  /**
   * For an untrusted entry: the spellings a reader takes for its identifiers ({@link textAliases}: look-alikes
   * folded, `+tags` off, numbers however grouped, the domains it named, what encoded runs decode to). A piece no
   * entry holds as written is tainted by an entry holding it as an alias. Empty for a trusted entry.
   */
  readonly aliases: TextAliases;
}

/** Options of {@link createProvenanceEntry}. */
export interface ProvenanceEntryOptions {
  /** The content is the answer of a directory: keep its whole entries (only those under `fields`, if given). */
  readonly directory?: { readonly fields?: readonly string[] };
  /** The call that fetched the content carried an argument the user typed (`namesFetchedSource`). */
  readonly named_source?: boolean;
  /** Pieces of the fetching call's arguments no trusted source held: a trusted answer does not vouch for them. */
  readonly echoes?: ReadonlySet<string>;
  /**
   * The session's room for what the entry keeps, its text, its tokens and its aliases together
   * ({@link keptChars}): tokens and aliases past it are not kept and the entry counts as cut. Default: no bound
   * but the text's.
   */
  readonly room?: number;
  /** Hidden characters were removed from the content before the agent read it: it counts as instructions. */
  readonly hidden_text?: boolean;
}

/** What an entry holds in the session's store: its text, its tokens and the aliases of an untrusted one. */
export function keptChars(entry: ProvenanceEntry): number {
  let tokens = 0;
  for (const token of entry.tokens) tokens += token.length;
  return entry.text.length + tokens + entry.aliases.chars;
}

/**
 * The `kind:value` of each token of `text`, at most `room` characters of them together (each counted whole):
 * those past it are not kept, and `cut` says so.
 */
function tokensWithin(text: string, room: number): { tokens: Set<string>; chars: number; cut: boolean } {
  const tokens = new Set<string>();
  let chars = 0;
  let cut = false;
  for (const t of extractValueTokens(text)) {
    const token = `${t.kind}:${t.value}`;
    if (tokens.has(token)) continue;
    if (chars + token.length > room) cut = true;
    else {
      tokens.add(token);
      chars += token.length;
    }
  }
  return { tokens, chars, cut };
}

/** Longest text kept for one entry; a longer one is cut and the session marks provenance incomplete. */
export const MAX_ENTRY_CHARS = 2_000_000;
/** Builds an entry from content of any JSON shape (strings as they are, anything else as JSON text). */
export function createProvenanceEntry(
  label: ProvenanceLabel,
  source: string,
  content: unknown,
  budget: number = MAX_ENTRY_CHARS,
  options: ProvenanceEntryOptions = {},
): ProvenanceEntry {
  const serialized = typeof content === "string" ? content : safeJson(content);
  // content that cannot be written as text (a cycle, a throwing getter) keeps nothing: it counts as cut
  let raw = serialized ?? "";
  const limit = Math.max(0, Math.min(MAX_ENTRY_CHARS, budget));
  const truncated = serialized === undefined || raw.length > limit;
  if (truncated) raw = raw.slice(0, limit);
  const untrusted = label === "external_untrusted";
  // The detector reads the content as it came, not as far as the session's room keeps it (a session out of
  // room still learns that a result reads like instructions), and undoes escapes itself.
  const scored = untrusted ? detectInstructions(serialized ?? "") : null;
  const instructions = scored !== null && options.hidden_text === true ? withHiddenText(scored) : scored;
  raw = comparableText(raw);
  // a directory's answer keeps its leaves; any other result only its records
  const read = untrusted && !truncated;
  const structure = read && options.directory !== undefined ? readStructure(content) : undefined;
  const directory =
    structure !== undefined && options.directory !== undefined
      ? directoryEntries(structure, options.directory.fields)
      : null;
  const records =
    (options.directory !== undefined ? structure?.records : read ? readRecords(content) : undefined) ?? [];
  const text = normalizeText(raw);
  // the tokens take what room the text leaves, the aliases what both leave: a result of many identifiers
  // cannot grow the store past it. A token not kept is not traced to: the entry counts as cut.
  const room = Math.max(0, (options.room ?? Number.POSITIVE_INFINITY) - text.length);
  const { tokens, chars, cut } = tokensWithin(raw, room);
  const aliases = untrusted ? textAliases(raw, tokens, room - chars) : NO_ALIASES;
  return Object.freeze({
    label,
    source,
    text,
    tokens,
    instructions,
    truncated: truncated || cut || aliases.cut,
    directory,
    records,
    named_source: untrusted && options.named_source === true,
    echoes: options.echoes ?? NO_ECHOES,
    aliases,
  });
}

const NO_ECHOES: ReadonlySet<string> = new Set();
const NO_ALIASES: TextAliases = Object.freeze({
  forms: new Set<string>(),
  digits: "",
  runs: "",
  chars: 0,
  cut: false,
});

/**
 * Characters of text read per pass by {@link identityTokensOf}: with its overlap, too few to hold the
 * per-text limit of identifiers (each takes four characters at least, with what parts it from the next).
 */
const IDENTITY_PASS_CHARS = 20_000;
/** Characters each pass also reads of the next, so an identifier across the cut is read whole. */
const IDENTITY_PASS_OVERLAP = 2_048;

/**
 * Every identifier token (`kind:value`) of `content`'s first {@link MAX_ENTRY_CHARS} characters, read in
 * passes each under the per-text limit of {@link extractValueTokens}: what an entry keeps stops at that limit,
 * and at the session's room, so an address placed after 10,000 decoys, or read once the session is full,
 * would be known to no later session. For a memory of earlier sessions; linear in the text.
 */
export function identityTokensOf(content: unknown): Set<string> {
  const serialized = typeof content === "string" ? content : safeJson(content);
  const text = comparableText((serialized ?? "").slice(0, MAX_ENTRY_CHARS));
  const out = new Set<string>();
  for (let at = 0; at < text.length; at += IDENTITY_PASS_CHARS) {
    const pass = text.slice(at, at + IDENTITY_PASS_CHARS + IDENTITY_PASS_OVERLAP);
    for (const t of extractValueTokens(pass)) out.add(`${t.kind}:${t.value}`);
  }
  return out;
}

/** Content as JSON text (a `bigint` as its digits), or undefined when it cannot be written (a cycle). */
function safeJson(content: unknown): string | undefined {
  if (content === undefined) return "";
  try {
    // undefined at run time for a function or a symbol, whatever the declared type says
    const text: string | undefined = JSON.stringify(content, (_key, value: unknown) =>
      typeof value === "bigint" ? value.toString() : value,
    );
    return text;
  } catch {
    return undefined;
  }
}
