/**
 * Named sources: an identifier on a page the user named (fetched with an argument the user typed) is trusted
 * when it stands beside the words of the one the user named in another argument of the same call.
 */
import type { ProvenanceEntry } from "./provenance-entry.js";
import type { EntryIndex } from "./provenance-index.js";
import type { PieceProvenance } from "./provenance.js";
import { wholeIdentity } from "./structured-content.js";
import { containsDelimited, type PieceKind } from "./value-tokens.js";

/** The identity (`kind:value`) of a piece: an identifier's token, or what a whole value is as one. */
export function identityOf(piece: { readonly kind: PieceKind; readonly piece: string }): string | undefined {
  return piece.kind === "value" ? wholeIdentity(piece.piece) : `${piece.kind}:${piece.piece}`;
}

/** How close (characters) the person's name must stand to an address on a named page to vouch for it. */
export const NAMED_SOURCE_WINDOW = 200;

/** Whether `anchor` occurs within {@link NAMED_SOURCE_WINDOW} characters of an occurrence of `piece` in `text`. */
function besideOn(text: string, piece: string, anchor: string): boolean {
  for (let at = text.indexOf(piece); at !== -1; at = text.indexOf(piece, at + 1)) {
    const around = text.slice(Math.max(0, at - NAMED_SOURCE_WINDOW), at + piece.length + NAMED_SOURCE_WINDOW);
    if (containsDelimited(around, anchor)) return true;
  }
  return false;
}

/**
 * `DeriveProvenanceOptions.named_sources`: each tainted piece a named result holds, beside the words of a
 * piece the user typed in another argument, becomes trusted (source `named-source:…`).
 */
export function applyNamedSources(
  index: EntryIndex,
  pieces: PieceProvenance[],
  payload: ReadonlySet<string>,
): PieceProvenance[] {
  const entryAt = (at: number): ProvenanceEntry => index.entries[at] as ProvenanceEntry;
  // the sources of the trusted entries, read only when a piece could be vouched for (the index lists them)
  if (!pieces.some((p) => p.status === "tainted" && !payload.has(String(p.path[0])))) return pieces;
  const userSources = new Set(index.trusted.map((at) => entryAt(at).source));
  const anchors = pieces.filter(
    (p) => !payload.has(String(p.path[0])) && p.trusted_sources.some((s) => userSources.has(s)),
  );
  // the first result the user named that holds the identity, of those not reading like instructions
  const namedHolder = (identity: string): ProvenanceEntry | undefined =>
    (index.tokens.get(identity) ?? [])
      .map(entryAt)
      .find((e) => e.named_source && e.instructions?.contains_instructions !== true);
  return pieces.map((p) => {
    const key = String(p.path[0]);
    if (p.status !== "tainted" || payload.has(key)) return p;
    const identity = identityOf(p);
    const holder = identity === undefined ? undefined : namedHolder(identity);
    if (holder === undefined) return p;
    // the page vouches for the address of the one the user named: that one's words beside the address on it
    const vouched = anchors.some(
      (a) => String(a.path[0]) !== key && (p.piece.includes(a.piece) || besideOn(holder.text, p.piece, a.piece)),
    );
    if (!vouched) return p;
    return { ...p, status: "trusted", trusted_sources: [...p.trusted_sources, `named-source:${holder.source}`] };
  });
}
