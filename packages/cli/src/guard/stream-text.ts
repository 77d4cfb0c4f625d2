import { Buffer } from "node:buffer";
import { merged, occurrences, rawSecrets, replacedPieces, spellSecrets } from "@acp/core";

export { joinedPiecesRedactor, type JoinedPiecesRedactor } from "@acp/core";

/**
 * Text a stream hands on in pieces, with every secret value replaced, even one whose pieces arrive apart.
 * `push` takes the next piece and returns the pieces that may be passed on now (none while the end of
 * what came could be the start of a secret); `end` returns those still held back, once no piece follows.
 * A piece is passed on whole or not yet, never merged with another nor cut in two: a stream whose
 * pieces are each the whole text so far (the AI SDK's preliminary results) keeps its shape.
 */
export interface TextStreamRedactor {
  push(piece: string): string[];
  end(): string[];
}

/**
 * A {@link TextStreamRedactor} that answers for every piece, in order: `push` and `end` return one text
 * for each of the oldest pieces they let go (an empty one for a piece that only held the rest of a
 * secret), so that the caller can put each back where its piece came from (a string of an object).
 */
export type PieceRedactor = TextStreamRedactor;

/** `%XX` for each UTF-8 byte of `char`, upper-case hex. */
function percentOf(char: string): string {
  return [...Buffer.from(char, "utf8")].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");
}

/**
 * Whether `text` is how `secret` begins, with any of its characters percent-encoded (as the redactor's
 * percent pattern reads it: a character as itself in either case or its `%XX` bytes in either case, a
 * space also as `+`, a `%` only encoded), and ends before the secret does, possibly inside a `%XX`.
 */
function startsPercentSpelling(text: string, secret: string): boolean {
  let at = 0;
  for (const char of secret) {
    if (at === text.length) return true;
    if (text[at] === "%") {
      const encoded = percentOf(char);
      const seen = text.slice(at, at + encoded.length).toUpperCase();
      if (!encoded.startsWith(seen)) return false;
      if (seen.length < encoded.length) return true; // the text ends inside the escape
      at += encoded.length;
    } else if (char !== "%" && text.slice(at, at + char.length).toLowerCase() === char.toLowerCase()) {
      at += char.length;
    } else if (char === " " && text[at] === "+") {
      at += 1;
    } else {
      return false;
    }
  }
  return false; // the whole secret: not a beginning of it but the secret itself (or more)
}

/**
 * A {@link TextStreamRedactor} over the secrets (and every spelling the redactor hides: JSON-escaped,
 * base64, percent-encoded). The text received so far is cut where no secret can straddle the cut: before
 * the longest end of it that could be the start of a spelling, and before any spelling the cut would
 * split. The pieces wholly before the cut are passed on, each with the spellings in it replaced: one that
 * runs across pieces is replaced in the piece it starts in and left out of those it runs on into. The
 * others wait for the next piece. So the pieces passed on, joined, never hold a secret, however the text
 * was cut into pieces, and each is a piece that came, as it came, when it holds none. A piece the next
 * one begins with (a stream of the whole text so far) also has a secret's start at its end masked when
 * the next piece shows the secret going on there (all of it, or more of its start).
 */
export function createTextStreamRedactor(
  secrets: readonly string[],
  redact: (text: string) => string,
): TextStreamRedactor {
  const pieces = pieceRedactors(secrets, redact)();
  return {
    push: (piece) => pieces.push(piece).filter((out) => out !== ""),
    end: () => pieces.end().filter((out) => out !== ""),
  };
}

/**
 * A maker of {@link PieceRedactor}s over the secrets (their spellings worked out once): each redacts one
 * text as {@link createTextStreamRedactor} does, one answer for each piece.
 */
export function pieceRedactors(secrets: readonly string[], redact: (text: string) => string): () => PieceRedactor {
  const raw = rawSecrets(secrets);
  const spelled = spellSecrets(raw);
  const longest = Math.max(0, ...spelled.strings.map((s) => s.length), ...raw.map((s) => 3 * Buffer.byteLength(s)));
  const couldBegin = (tail: string): boolean =>
    spelled.strings.some((s) => s.length > tail.length && s.startsWith(tail)) ||
    raw.some((s) => startsPercentSpelling(tail, s));
  const safeCut = (text: string, found: readonly [number, number][]): number => {
    let cut = text.length;
    for (let at = Math.max(0, text.length - longest + 1); at < text.length; at++) {
      if (couldBegin(text.slice(at))) {
        cut = at;
        break;
      }
    }
    for (let moved = true; moved;) {
      moved = false;
      for (const [start, end] of found) {
        if (start < cut && cut < end) {
          cut = start;
          moved = true;
        }
      }
    }
    return cut;
  };
  const replaced = (pieces: readonly string[], text: string, masks: readonly [number, number][]): string[] =>
    replacedPieces(pieces, text, masks, redact);
  /**
   * A stream whose every piece is the whole text so far shows the start of a secret in one piece and all
   * of it in the next: where a piece goes on as `next` (which begins with it) and a spelling in `next`
   * runs across the piece's end, that end of the piece is a secret's start and is masked too.
   */
  const grown = (pieces: readonly string[], next: string | undefined): [number, number][] => {
    const masks: [number, number][] = [];
    let from = 0;
    pieces.forEach((piece, i) => {
      const after = pieces[i + 1] ?? next;
      if (piece !== "" && after !== undefined && after.length > piece.length && after.startsWith(piece)) {
        for (const [start, end] of occurrences(after, spelled)) {
          if (start < piece.length && piece.length < end) masks.push([from + start, from + piece.length]);
        }
        // the next piece goes on with more of a secret, but not yet all of it
        const first = Math.max(0, piece.length - longest + 1, after.length - longest + 1);
        for (let at = first; at < piece.length; at++) {
          if (couldBegin(after.slice(at))) {
            masks.push([from + at, from + piece.length]);
            break;
          }
        }
      }
      from += piece.length;
    });
    return masks;
  };
  return () => {
    let held: string[] = [];
    return {
      push(piece) {
        if (raw.length === 0) return [piece];
        held.push(piece);
        const text = held.join("");
        const found = occurrences(text, spelled);
        // the last end of a piece at or before the cut that no spelling runs across
        const ends: number[] = [];
        for (const one of held) ends.push((ends.at(-1) ?? 0) + one.length);
        let limit = safeCut(text, found);
        let count = 0;
        for (let again = true; again;) {
          count = ends.filter((end) => end <= limit).length;
          const upTo = count === 0 ? 0 : (ends[count - 1] as number);
          const across = found.find(([start, end]) => start < upTo && upTo < end);
          again = across !== undefined;
          if (across !== undefined) limit = across[0];
        }
        if (count === 0) return [];
        const upTo = ends[count - 1] as number;
        const going = held.slice(0, count);
        held = held.slice(count);
        const masks = [...found.filter(([, end]) => end <= upTo), ...grown(going, held[0])];
        return replaced(going, text.slice(0, upTo), merged(masks));
      },
      end() {
        const going = held;
        held = [];
        const text = going.join("");
        return replaced(going, text, merged([...occurrences(text, spelled), ...grown(going, undefined)]));
      },
    };
  };
}
