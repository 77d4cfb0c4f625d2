/**
 * An index of a session's provenance entries, so that judging a call costs what its arguments ask of the
 * session, not the session's length: the entries that could hold a piece are looked up by its words and tokens,
 * and only those are compared with it (by the same rules as before). Built once per array of entries and kept up
 * as the array grows (a session's entries only grow, or are replaced by a new array).
 */
import type { ProvenanceEntry } from "./provenance-entry.js";
import type { StructuredRecord } from "./structured-content.js";
import { wordsOf } from "./value-tokens.js";

/** Positions (in the entries array, ascending) of the entries of one side whose text has each word. */
type Postings = Map<string, number[]>;

/** A record of an untrusted structured result, with the position of its entry (`namedRecordIdentities`). */
export interface IndexedRecord {
  readonly at: number;
  readonly record: StructuredRecord;
}

/** The index of one array of entries. Positions are indexes into {@link EntryIndex.entries}. */
export interface EntryIndex {
  readonly entries: readonly ProvenanceEntry[];
  /** Positions of the `user_input` and `system_policy` entries. */
  readonly trusted: number[];
  /** Words of the trusted entries' texts. */
  readonly trustedWords: Postings;
  /** Words of the untrusted entries' texts. */
  readonly untrustedWords: Postings;
  /** Every entry's tokens (`kind:value`). */
  readonly tokens: Postings;
  /** The whole entries of untrusted directory answers. */
  readonly directories: Postings;
  /** An untrusted entry's tokens and alias forms (`heldAsAlias`). */
  readonly forms: Postings;
  /** Positions of the untrusted entries holding numbers (digits or runs) an alias may be read in. */
  readonly numbered: number[];
  /** Records with identities, of entries whose content does not read like instructions, in entry order. */
  readonly records: IndexedRecord[];
  /** Entries indexed so far (a prefix of `entries`), and the last of them (to notice an array changed in place). */
  scanned: number;
  last: ProvenanceEntry | undefined;
}

const INDEXES = new WeakMap<readonly ProvenanceEntry[], EntryIndex>();

function post(postings: Postings, key: string, at: number): void {
  const list = postings.get(key);
  if (list === undefined) postings.set(key, [at]);
  else if (list[list.length - 1] !== at) list.push(at);
}

function add(index: EntryIndex, entry: ProvenanceEntry, at: number): void {
  const untrusted = entry.label === "external_untrusted";
  if (!untrusted) index.trusted.push(at);
  const words = untrusted ? index.untrustedWords : index.trustedWords;
  for (const word of wordsOf(entry.text)) post(words, word, at);
  for (const token of entry.tokens) post(index.tokens, token, at);
  if (untrusted) {
    for (const value of entry.directory ?? []) post(index.directories, value, at);
    for (const token of entry.tokens) post(index.forms, token, at);
    for (const form of entry.aliases.forms) post(index.forms, form, at);
    if (entry.aliases.digits.length + entry.aliases.runs.length > 0) index.numbered.push(at);
  }
  if (entry.instructions?.contains_instructions !== true)
    for (const record of entry.records) if (record.identities.length > 0) index.records.push({ at, record });
}

/** The index of `entries`, brought up to date with what was added to the array since it was last asked for. */
export function entryIndex(entries: readonly ProvenanceEntry[]): EntryIndex {
  let index = INDEXES.get(entries);
  const stale =
    index !== undefined &&
    (index.scanned > entries.length || (index.scanned > 0 && entries[index.scanned - 1] !== index.last));
  if (index === undefined || stale) {
    index = {
      entries,
      trusted: [],
      trustedWords: new Map(),
      untrustedWords: new Map(),
      tokens: new Map(),
      directories: new Map(),
      forms: new Map(),
      numbered: [],
      records: [],
      scanned: 0,
      last: undefined,
    };
    INDEXES.set(entries, index);
  }
  for (; index.scanned < entries.length; index.scanned++) {
    const entry = entries[index.scanned] as ProvenanceEntry;
    add(index, entry, index.scanned);
    index.last = entry;
  }
  return index;
}

function has(list: readonly number[], at: number): boolean {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const value = list[mid] as number;
    if (value === at) return true;
    if (value < at) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Positions, ascending, of the entries of one side whose text has every one of `words` (none missing). */
export function holdingWords(postings: Postings, words: readonly string[]): readonly number[] {
  const lists: (readonly number[])[] = [];
  for (const word of words) {
    const list = postings.get(word);
    if (list === undefined) return [];
    lists.push(list);
  }
  lists.sort((a, b) => a.length - b.length);
  const [first, ...rest] = lists;
  if (first === undefined) return [];
  return rest.length === 0 ? first : first.filter((at) => rest.every((list) => has(list, at)));
}

/**
 * Positions, ascending, of the trusted entries that could hold a text whose words are `words`: those with every
 * one of them; every trusted entry when it has none (`--`).
 */
export function trustedHolding(index: EntryIndex, words: readonly string[]): readonly number[] {
  return words.length === 0 ? index.trusted : holdingWords(index.trustedWords, words);
}

/** The union of position lists, ascending, each once. */
export function unionOf(lists: readonly (readonly number[] | undefined)[]): number[] {
  const present = lists.filter((l): l is readonly number[] => l !== undefined && l.length > 0);
  if (present.length === 1) return [...(present[0] as readonly number[])];
  const out = present.flat().sort((a, b) => a - b);
  return out.filter((at, i) => i === 0 || out[i - 1] !== at);
}

/** Every position of `entries`: what a piece with no word in it is compared with. */
export function everyPosition(entries: readonly ProvenanceEntry[]): number[] {
  return Array.from({ length: entries.length }, (_, i) => i);
}
