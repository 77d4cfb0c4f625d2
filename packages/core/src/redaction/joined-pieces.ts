import { REDACTED } from "./rules.js";
import { lineEndings, spellSecrets, type SecretSpellings } from "./secret-variants.js";

/**
 * Whether `text` may hold a secret that only its percent pattern finds: percent-encoded (a `%`, or `+` for
 * a space) or in other case (a secret with letters, in the lower-case copy of `text`).
 */
export function mayHoldPercentSpelling(text: string, spelled: SecretSpellings): boolean {
  if (spelled.percentEncoded.length === 0) return false;
  if (text.includes("%") || text.includes("+")) return true;
  if (spelled.folded.length === 0) return false;
  const lower = text.toLowerCase();
  return spelled.folded.some((secret) => lower.includes(secret));
}

/** Where the secrets' spellings occur in `text`, as `[start, end)`. */
export function occurrences(text: string, spelled: SecretSpellings): [number, number][] {
  const found: [number, number][] = [];
  for (const spelling of spelled.strings) {
    for (let at = text.indexOf(spelling); at !== -1; at = text.indexOf(spelling, at + 1)) {
      found.push([at, at + spelling.length]);
    }
  }
  if (!mayHoldPercentSpelling(text, spelled)) return found;
  for (const pattern of spelled.percentEncoded) {
    const re = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
    for (let match = re.exec(text); match !== null; match = re.exec(text)) {
      found.push([match.index, match.index + match[0].length]);
      if (match[0].length === 0) re.lastIndex++;
    }
  }
  return found;
}

/** Occurrences merged where they overlap, in order (two that only touch stay two: each is hidden where it starts). */
export function merged(found: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [start, end] of [...found].sort((a, b) => a[0] - b[0])) {
    const last = out.at(-1);
    if (last !== undefined && start < last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

/**
 * `pieces` (which are `text`) with every spelling in `masks` replaced where it starts and left out where
 * it runs on; the text between masks passes through `redact`.
 */
export function replacedPieces(
  pieces: readonly string[],
  text: string,
  masks: readonly [number, number][],
  redact: (text: string) => string,
  placeholder: string = REDACTED,
): string[] {
  const out: string[] = [];
  let from = 0;
  for (const piece of pieces) {
    const to = from + piece.length;
    let shown = "";
    let at = from;
    for (const [start, end] of masks) {
      if (end <= from || start >= to) continue;
      if (start > at) shown += redact(text.slice(at, start));
      if (start >= from) shown += placeholder;
      at = Math.max(at, Math.min(end, to));
    }
    if (at < to) shown += redact(text.slice(at, to));
    out.push(shown);
    from = to;
  }
  return out;
}

/** The secrets as written and with their line breaks as LF and as CRLF, each once (empty ones left out). */
export const rawSecrets = (secrets: readonly string[]): string[] => [
  ...new Set(secrets.filter((s) => s !== "").flatMap(lineEndings)),
];

/**
 * The pieces' answers when a spelling in `spelled` runs across two of them (read joined in order), with
 * every spelling in the joined text replaced where it starts and left out where it runs on; `undefined`
 * when none does (each piece checked alone is then enough). Text outside the spellings passes through
 * `redact`.
 */
export function acrossPieces(
  pieces: readonly string[],
  spelled: SecretSpellings,
  redact: (text: string) => string,
  placeholder: string = REDACTED,
): string[] | undefined {
  if (pieces.length < 2 || spelled.strings.length === 0) return undefined;
  const text = pieces.join("");
  const found = merged(occurrences(text, spelled));
  if (found.length === 0) return undefined;
  // where each piece ends: a spelling that starts before one of these and ends after it runs across
  const ends: number[] = [];
  for (const piece of pieces) ends.push((ends.at(-1) ?? 0) + piece.length);
  let next = 0;
  const across = found.some(([start, end]) => {
    while (next < ends.length && (ends[next] as number) <= start) next++;
    return next < ends.length && (ends[next] as number) < end;
  });
  return across ? replacedPieces(pieces, text, found, redact, placeholder) : undefined;
}

/**
 * The texts of pieces that came together (the strings of an array, the text parts of an MCP result), read
 * joined: one answer for each piece, with every spelling of a secret replaced where it starts and left out
 * where it runs on, or `undefined` when no spelling runs across two pieces (each piece checked alone is
 * then enough).
 */
export type JoinedPiecesRedactor = (pieces: readonly string[]) => string[] | undefined;

/** A {@link JoinedPiecesRedactor} over the secrets (their spellings worked out once). */
export function joinedPiecesRedactor(
  secrets: readonly string[],
  redact: (text: string) => string,
): JoinedPiecesRedactor {
  const raw = rawSecrets(secrets);
  const spelled = spellSecrets(raw);
  return (pieces) => (raw.length === 0 ? undefined : acrossPieces(pieces, spelled, redact));
}
