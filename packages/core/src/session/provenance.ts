/**
 * Provenance: every value entering a session is kept with a label and a source ({@link createProvenanceEntry});
 * {@link deriveProvenance} decides, by one deterministic rule, where each argument value of a later call came from.
 */
import { EARLIER_SESSION } from "./provenance-memory.js";
import { createProvenanceBudget, type ProvenanceBudget } from "./provenance-budget.js";
import { applyNamedSources, identityOf } from "./named-sources.js";
import type { ProvenanceEntry } from "./provenance-entry.js";
import { holdsNumber, NUMBER_SCANS, RUN_CHAR_UNITS } from "./number-aliases.js";
import {
  entryIndex,
  everyPosition,
  holdingWords,
  trustedHolding,
  unionOf,
  type EntryIndex,
} from "./provenance-index.js";
import { pieceAliases, recallForms, type PieceAliases } from "./value-aliases.js";
import {
  comparableText,
  containsDelimited,
  containsWhole,
  extractValueTokens,
  normalizeText,
  PIECE_KINDS,
  wordsOf,
  type PieceKind,
} from "./value-tokens.js";

export {
  PROVENANCE_LABELS,
  MAX_ENTRY_CHARS,
  createProvenanceEntry,
  identityTokensOf,
  keptChars,
  type ProvenanceLabel,
  type ProvenanceEntry,
  type ProvenanceEntryOptions,
} from "./provenance-entry.js";

/** The provenance of one tracked piece of one argument string. */
export interface PieceProvenance {
  /** The argument path (`["to", 0]`). */
  readonly path: readonly (string | number)[];
  readonly kind: PieceKind;
  /** The piece in normal form. */
  readonly piece: string;
  /** `trusted`: some user or system source holds it; `tainted`: only untrusted sources do; `unknown`: none. */
  readonly status: "trusted" | "tainted" | "unknown";
  readonly trusted_sources: readonly string[];
  readonly untrusted_sources: readonly string[];
  /** Untrusted sources holding the piece whose content reads like instructions. */
  readonly instruction_sources: readonly string[];
}

/** Options of {@link deriveProvenance}. */
export interface DeriveProvenanceOptions {
  /** Piece kinds to track (default: all). */
  readonly track?: readonly PieceKind[];
  /**
   * Argument names not tracked (references to the user's own objects the integrator accepts). At the top level
   * the argument is skipped; deeper (`attachments: [{ file_id }]`) a string under that key is not tracked
   * whole, but an identifier written into it (an address, a URL, an IBAN) still is.
   */
  readonly untracked_arguments?: readonly string[];
  /**
   * Top-level argument names that carry payload (a message body, a title): only the identifiers inside them
   * (addresses, URLs, IBANs, phone numbers) are tracked, not the text as a whole.
   */
  readonly payload_arguments?: readonly string[];
  /**
   * Named sources: an identifier in a destination argument is trusted when a result the user named (fetched
   * with an argument the user typed) holds it AND another destination argument of the same call is one the
   * user typed (`invite Dora` + the address on the page the user said holds Dora's address).
   */
  readonly named_sources?: boolean;
  /**
   * An earlier session's memory ({@link ProvenanceMemory.recall}): a piece no entry holds, whose identity the
   * memory still knows, is `tainted` by `earlier-session:<source>` instead of `unknown`.
   */
  readonly recall?: (identity: string) => string | undefined;
  /**
   * The decision's tracing work ({@link createProvenanceBudget}), shared by every call of one decision: once
   * spent, no further piece is judged and `exceeded` is set (the caller asks instead of deciding on a part).
   */
  readonly budget?: ProvenanceBudget;
}

/** Work units of one comparison of a piece with an entry, besides the text it scans. */
const COMPARE_UNITS = 8;

/** Shortest whole argument string tracked as a `value` piece. */
export const MIN_VALUE_PIECE = 2;

interface Piece {
  readonly kind: PieceKind;
  readonly piece: string;
}

function piecesOf(value: string, track: ReadonlySet<PieceKind>): Piece[] {
  // read as the entries are (escapes undone, invisible characters dropped): a copy either way still matches
  const leaf = comparableText(value);
  const pieces: Piece[] = extractValueTokens(leaf)
    .filter((t) => track.has(t.kind))
    .map((t) => ({ kind: t.kind, piece: t.value }));
  const whole = normalizeText(leaf).trim();
  if (track.has("value") && whole.length >= MIN_VALUE_PIECE) pieces.push({ kind: "value", piece: whole });
  return pieces;
}

/** Charges `units` to a budget, if there is one. */
type Spend = (units: number) => void;

function holds(entry: ProvenanceEntry, piece: Piece, spend: Spend): boolean {
  if (piece.kind !== "value" && entry.tokens.has(`${piece.kind}:${piece.piece}`)) return true;
  spend(entry.text.length);
  return containsDelimited(entry.text, piece.piece.toLowerCase());
}

/**
 * The untrusted entries that hold a piece as an alias ({@link ProvenanceEntry.aliases}): the same address with a
 * `+tag` or look-alike letters, a host under a domain they named, the same number grouped otherwise. Asked only
 * of a piece no entry holds as written; charged to the budget like any comparison (the numbers' text is scanned).
 */
function heldAsAlias(index: EntryIndex, piece: Piece, aliases: PieceAliases, spend: Spend): ProvenanceEntry[] {
  const digits = aliases.digits ?? (piece.kind === "phone" || piece.kind === "account" ? piece.piece : undefined);
  // a domain the user named is the user's: a host under it is not the text's for being under it too
  const parents = aliases.parents.filter((p) => !vouchedDomain(index, p.slice(p.indexOf(":") + 1), spend));
  const lookups = aliases.forms.length + parents.length;
  if (lookups === 0 && digits === undefined) return [];
  // the untrusted entries holding one of the forms, and (for a number) those holding numbers at all
  spend((lookups + 1) * COMPARE_UNITS);
  const candidates = unionOf([
    ...[...aliases.forms, ...parents].map((form) => index.forms.get(form)),
    digits === undefined ? undefined : index.numbered,
  ]);
  const out: ProvenanceEntry[] = [];
  for (const at of candidates) {
    const entry = index.entries[at] as ProvenanceEntry;
    spend((lookups + 1) * COMPARE_UNITS);
    let held =
      aliases.forms.some((f) => entry.tokens.has(f) || entry.aliases.forms.has(f)) ||
      parents.some((p) => entry.aliases.forms.has(p));
    const numbers = entry.aliases.digits.length + RUN_CHAR_UNITS * entry.aliases.runs.length;
    if (!held && digits !== undefined && numbers > 0) {
      // a few scans of the entry's numbers and runs (as written, and with a country code on either side)
      spend(numbers * NUMBER_SCANS);
      held = holdsNumber(entry.aliases.digits, entry.aliases.runs, digits);
    }
    if (held) out.push(entry);
  }
  return out;
}

/** Whether a `user_input` or `system_policy` entry vouches for `domain` as a host. */
function vouchedDomain(index: EntryIndex, domain: string, spend: Spend): boolean {
  const piece: Piece = { kind: "host", piece: domain };
  const words = [...wordsOf(domain.toLowerCase())];
  spend((words.length + 1) * COMPARE_UNITS);
  const candidates = unionOf([trustedHolding(index, words), index.tokens.get(`host:${domain}`)]);
  return candidates.some((at) => {
    const entry = index.entries[at] as ProvenanceEntry;
    return entry.label !== "external_untrusted" && vouches(entry, piece, spend);
  });
}

/** Work units of one look-up in an earlier session's memory (a digest and a store read). */
const RECALL_UNITS = 4_096;

/**
 * Shortest piece a trusted text vouches for by mere occurrence. A shorter one (`13`, `ok`) is too common to
 * say the user chose it (`June 13` does not name file `13`): it is trusted only when a trusted entry is
 * exactly that value (a trusted-values item, a one-word reply) — except a word of letters only of at least
 * {@link MIN_TRUSTED_NAME} letters (`Bob`, `Eve`), which the user's text vouches for on word boundaries.
 */
export const MIN_TRUSTED_OCCURRENCE = 4;

/** Shortest all-letter piece (a first name) the user's text vouches for by occurrence on word boundaries. */
export const MIN_TRUSTED_NAME = 3;

/**
 * Whether a trusted entry vouches for a piece: the same token, or the piece as a whole in its text — never a
 * part of a longer identifier ({@link containsWhole}): the user who typed `jane@firm.com.au` did not name
 * `jane@firm.com`. (Untrusted text taints by any occurrence on word boundaries: that only asks more.)
 */
function vouches(entry: ProvenanceEntry, piece: Piece, spend: Spend): boolean {
  // a trusted answer repeating what it was asked vouches for none of it
  if (entry.echoes.size > 0 && entry.echoes.has(piece.piece)) return false;
  const long = piece.piece.length >= MIN_TRUSTED_OCCURRENCE;
  if (long || (piece.piece.length >= MIN_TRUSTED_NAME && /^\p{L}+$/u.test(piece.piece))) {
    if (piece.kind !== "value" && entry.tokens.has(`${piece.kind}:${piece.piece}`)) return true;
    spend(entry.text.length);
    return containsWhole(entry.text, piece.piece.toLowerCase());
  }
  return entry.text.trim() === piece.piece.toLowerCase();
}

/**
 * Identifiers that are whole fields of a record the user named: a record of an untrusted structured result
 * one of whose names (a title, a subject, a file name) occurs in a `user_input` or `system_policy` entry.
 * Content that reads like instructions names no record. Maps `kind:value` to the source that holds the record.
 */
function namedRecordIdentities(index: EntryIndex, budget?: ProvenanceBudget): Map<string, string> {
  const out = new Map<string, string>();
  if (index.trusted.length === 0) return out;
  const spend: Spend = budget === undefined ? () => undefined : (units) => void (budget.left -= units);
  // the trusted texts that could hold a name: those with every word of it
  const namedIn = (name: string): boolean => {
    const words = [...wordsOf(name)];
    spend((words.length + 1) * COMPARE_UNITS);
    return trustedHolding(index, words).some((at) => {
      const text = (index.entries[at] as ProvenanceEntry).text;
      spend(text.length + COMPARE_UNITS);
      return containsDelimited(text, name);
    });
  };
  for (const { at, record } of index.records) {
    if (budget !== undefined && budget.left <= 0) {
      // a record not read for want of work names nothing: its identities stay as untrusted as they are
      budget.exceeded = true;
      return out;
    }
    if (!record.names.some(namedIn)) continue;
    const source = (index.entries[at] as ProvenanceEntry).source;
    for (const identity of record.identities) if (!out.has(identity)) out.set(identity, source);
  }
  return out;
}

/**
 * The entries that could hold a piece, ascending: those whose text has every word of it (a piece occurs on word
 * boundaries, so its words are whole words of the text), those with it as a token, the directories listing it;
 * every entry for a piece without a word (`--`).
 */
function candidatesFor(index: EntryIndex, piece: Piece, spend: Spend): readonly number[] {
  const words = [...wordsOf(piece.piece.toLowerCase())];
  spend((words.length + 3) * COMPARE_UNITS);
  if (words.length === 0) return everyPosition(index.entries);
  return unionOf([
    holdingWords(index.trustedWords, words),
    holdingWords(index.untrustedWords, words),
    piece.kind === "value" ? undefined : index.tokens.get(`${piece.kind}:${piece.piece}`),
    index.directories.get(piece.piece),
  ]);
}

function judgePiece(
  index: EntryIndex,
  named: ReadonlyMap<string, string>,
  path: (string | number)[],
  piece: Piece,
  recall: ((identity: string) => string | undefined) | undefined,
  spend: Spend,
  traceAliases: boolean,
): PieceProvenance {
  const trusted: string[] = [];
  const untrusted: string[] = [];
  const instructed: string[] = [];
  const candidates = candidatesFor(index, piece, spend);
  spend(candidates.length * COMPARE_UNITS);
  for (const at of candidates) {
    const entry = index.entries[at] as ProvenanceEntry;
    if (entry.label !== "external_untrusted") {
      if (vouches(entry, piece, spend)) trusted.push(entry.source);
    } else if (
      entry.directory?.has(piece.piece) === true &&
      entry.instructions?.contains_instructions !== true &&
      !entry.echoes.has(piece.piece)
    ) {
      trusted.push(`directory:${entry.source}`);
    } else if (holds(entry, piece, spend)) {
      untrusted.push(entry.source);
      if (entry.instructions?.contains_instructions === true) instructed.push(entry.source);
    }
  }
  const identity = identityOf(piece);
  const record = identity === undefined ? undefined : named.get(identity);
  if (record !== undefined) trusted.push(`named-record:${record}`);
  let aliases: PieceAliases | undefined;
  if (traceAliases && trusted.length === 0 && untrusted.length === 0) {
    spend(piece.piece.length + COMPARE_UNITS);
    aliases = pieceAliases(piece.kind, piece.piece);
    for (const entry of heldAsAlias(index, piece, aliases, spend)) {
      untrusted.push(entry.source);
      if (entry.instructions?.contains_instructions === true) instructed.push(entry.source);
    }
  }
  if (recall !== undefined && aliases !== undefined && trusted.length === 0 && untrusted.length === 0) {
    // the piece as written, then its aliases (an earlier session kept those of what it read too)
    const asked = [...(identity === undefined ? [] : [identity]), ...recallForms(aliases)];
    for (const form of new Set(asked)) {
      spend(RECALL_UNITS);
      const earlier = recall(form);
      if (earlier === undefined) continue;
      untrusted.push(`${EARLIER_SESSION}${earlier}`);
      break;
    }
  }
  const status = trusted.length > 0 ? "trusted" : untrusted.length > 0 ? "tainted" : "unknown";
  return {
    path,
    kind: piece.kind,
    piece: piece.piece,
    status,
    trusted_sources: trusted,
    untrusted_sources: untrusted,
    instruction_sources: instructed,
  };
}

/**
 * The derivation rule. Every string leaf of the arguments (booleans and numbers are not tracked, except a whole
 * number of 8 or more digits, read as its digits: an account number) is cut into
 * pieces: each identifier token in it (e-mail, URL, URL host, IBAN, phone, account number) and the whole
 * string (not for `payload_arguments`, whose text as a whole is not tracked; `untracked_arguments` are skipped
 * at the top level, and a string under such a key deeper down is tracked only by the identifiers inside).
 * A piece is `trusted` when
 * - any `user_input` or `system_policy` entry holds it (as the same token, or as text on word boundaries,
 *   case- and white-space-insensitive; a piece shorter than {@link MIN_TRUSTED_OCCURRENCE} only when the entry
 *   is exactly that value, or when it is a word of at least {@link MIN_TRUSTED_NAME} letters), or
 * - it is one whole entry of a directory's answer (source `directory:…`), or
 * - it is an identifier that is a whole field of a record the user named (source `named-record:…`);
 *
 * `tainted` when only `external_untrusted` entries hold it, and `unknown` when none does (the model wrote it).
 * Trust wins: a value the user named stays trusted even when untrusted content repeats it. Returns every
 * piece, in argument order.
 */
export function deriveProvenance(
  entries: readonly ProvenanceEntry[],
  args: Readonly<Record<string, unknown>>,
  options: DeriveProvenanceOptions = {},
): PieceProvenance[] {
  return derivePieces(entries, args, options, true);
}

/**
 * {@link deriveProvenance}; without `traceAliases` a piece no entry holds as written is not looked up among the
 * aliases of untrusted text, nor in an earlier session's memory (it stays `unknown`, and that work is not spent):
 * which pieces are `trusted` does not change, and a budget spent less can only judge more of them.
 */
function derivePieces(
  entries: readonly ProvenanceEntry[],
  args: Readonly<Record<string, unknown>>,
  options: DeriveProvenanceOptions,
  traceAliases: boolean,
): PieceProvenance[] {
  const given = options.track ?? PIECE_KINDS;
  // every kind, in their order (the default, and what settings give unless told otherwise): the sets made once
  const every =
    given === PIECE_KINDS || (given.length === PIECE_KINDS.length && given.every((k, i) => k === PIECE_KINDS[i]));
  const track = every ? EVERY_KIND : new Set<PieceKind>(given);
  const payloadTrack = every ? PAYLOAD_KINDS : payloadKinds(track);
  const skip = new Set(options.untracked_arguments ?? []);
  const payload = new Set(options.payload_arguments ?? []);
  const budget = options.budget;
  const spend: Spend = budget === undefined ? () => undefined : (units) => void (budget.left -= units);
  const index = entryIndex(entries);
  const named = namedRecordIdentities(index, budget);
  const out: PieceProvenance[] = [];
  type Leaf = { value: unknown; path: (string | number)[]; reference?: boolean };
  const stack: Leaf[] = Object.entries(args)
    .filter(([key]) => !skip.has(key))
    .flatMap(([key, value]): Leaf[] => [
      { value: key, path: [key], reference: true },
      { value, path: [key] },
    ])
    .reverse();
  while (stack.length > 0) {
    if (budget !== undefined && budget.left <= 0) {
      // what is left untraced is not judged at all: the caller asks rather than decide on a part
      budget.exceeded = true;
      break;
    }
    const popped = stack.pop() as Leaf;
    const { path, reference } = popped;
    const value = accountNumberText(popped.value) ?? popped.value;
    if (typeof value === "string") {
      // A nested reference (`attachments[0].file_id`) is not tracked whole; an identifier written into it is.
      const kinds = reference === true || payload.has(String(path[0])) ? payloadTrack : track;
      for (const piece of piecesOf(value, kinds))
        out.push(judgePiece(index, named, path, piece, options.recall, spend, traceAliases));
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] });
    } else if (typeof value === "object" && value !== null) {
      const children = Object.entries(value as Record<string, unknown>).reverse();
      for (const [key, child] of children) {
        const scalar = typeof child === "string" || typeof child === "number";
        stack.push({ value: child, path: [...path, key], reference: skip.has(key) && scalar });
        // a key can be data too (`permissions: { "bob@x.example": "editor" }`): the identifiers in it are tracked
        stack.push({ value: key, path: [...path, key], reference: true });
      }
    }
  }
  return options.named_sources === true ? applyNamedSources(index, out, payload) : out;
}

/** The kinds a payload argument or a reference is tracked by: its identifiers, not its text or a bare number. */
function payloadKinds(track: ReadonlySet<PieceKind>): ReadonlySet<PieceKind> {
  return new Set<PieceKind>([...track].filter((k) => k !== "value" && k !== "account"));
}

/** Every piece kind: what is tracked by default. */
const EVERY_KIND: ReadonlySet<PieceKind> = new Set<PieceKind>(PIECE_KINDS);
const PAYLOAD_KINDS = payloadKinds(EVERY_KIND);

/** Fewest digits of a whole number read as an account number (as the `account` token: 8 or more). */
const MIN_ACCOUNT_DIGITS = 8;

/**
 * A number that is an identifier, not an amount: a whole number of at least {@link MIN_ACCOUNT_DIGITS} digits
 * (`recipient_account: 987654321012`), as its digits; undefined for anything else. Amounts and counts are
 * not tracked, but an account number sent as a JSON number is the same destination as the string.
 */
function accountNumberText(value: unknown): string | undefined {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) return undefined;
  const digits = String(value);
  return digits.length >= MIN_ACCOUNT_DIGITS ? digits : undefined;
}

/** A file's name (`report.xlsx`, `address-change.txt`): what names one document, unlike a search's words. */
const FILE_NAME = /^[\p{L}\p{N}_-]+\.[\p{L}\p{N}]{2,5}$/u;

/**
 * Whether a call names what it fetches by the user's own words: an identifier (a URL, a host, an address) in
 * one of its string arguments, or a whole argument that is a file name, occurs in a `user_input` entry. Words
 * the user typed (`meeting notes`) name no source: a search for them returns what anyone wrote.
 */
export function namesFetchedSource(
  entries: readonly ProvenanceEntry[],
  args: Readonly<Record<string, unknown>>,
): boolean {
  const users = entries.filter((e) => e.label === "user_input");
  if (users.length === 0) return false;
  const names = (pieces: readonly PieceProvenance[]): boolean =>
    pieces.some(
      (p) =>
        p.status === "trusted" &&
        p.piece.length >= MIN_TRUSTED_OCCURRENCE &&
        (p.kind !== "value" || FILE_NAME.test(p.piece)),
    );
  // Aliases only ever add untrusted sources: without them the same pieces are trusted, and a budget spent less
  // judges the same pieces first, maybe more. When none of those names a source, the whole derivation names none
  // either; only when one does is the whole derivation needed (its spending decides whether the budget ran out).
  if (!names(derivePieces(users, args, { budget: createProvenanceBudget() }, false))) return false;
  const budget = createProvenanceBudget();
  const named = names(deriveProvenance(users, args, { budget }));
  // arguments too many to trace name no source: the result is only as trusted as any other
  return named && !budget.exceeded;
}
