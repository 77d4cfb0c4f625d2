import { printable } from "@acp/core";

/**
 * The emoji tag sequences of Unicode's recommended set (UTS #51): the flags of England, Scotland and Wales,
 * U+1F3F4 then `gbeng`, `gbsct` or `gbwls` in tag characters and the cancel tag. The only tags ordinary
 * text holds; each is shown as one flag.
 */
const FLAG_TAGS =
  /\u{1f3f4}\u{e0067}\u{e0062}(?:\u{e0065}\u{e006e}\u{e0067}|\u{e0073}\u{e0063}\u{e0074}|\u{e0077}\u{e006c}\u{e0073})\u{e007f}/gu;
const TAG = /[\u{e0000}-\u{e007f}]/u;
/** Embeddings, overrides and isolates (and their ends): the controls of "Trojan Source" (CVE-2021-42574). */
const BIDI = /[\u202a-\u202e\u2066-\u2069]/u;
/** C0 (but tab, line feed and carriage return), DEL and C1. */
const CONTROL = /[^\P{Cc}\t\n\r]/u;
const LONE_SURROGATE = /\p{Cs}/u;
/** What a renderer shows as nothing: zero-width spaces and joiners, variation selectors, fillers, … */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;
/**
 * Zero-width characters no Latin text needs (spaces, joiners, the word joiner, the byte-order mark, the
 * Mongolian vowel separator, variation selectors), each between two ASCII characters: one such between each
 * two letters carries a bit or more a character no person sees (`a\u200bb\u200cc…`). The soft hyphen,
 * which hyphenation puts between letters, is not among them.
 */
const ZERO_WIDTH_IN_ASCII =
  /(?<=[\x20-\x7e])(?:[\u200b-\u200d\u2060\ufeff\u180e]|\p{Variation_Selector})(?=[\x20-\x7e])/gu;
/** More than this many {@link ZERO_WIDTH_IN_ASCII} in one text (a byte's worth) are hidden text. */
export const MAX_ZERO_WIDTH_IN_ASCII = 7;
/** Printable ASCII and the layout characters: most text, decided by one test. */
const PLAIN = /^[\x20-\x7e\t\n\r]*$/;

function hex(char: string): string {
  return `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * What in `text` (free text of a definition: a description, a schema's words) the model reads and a person
 * does not see, or undefined when there is nothing. Found: a tag character (but in the three flag
 * sequences), which spells ASCII text no font draws (the "ASCII smuggling" of tool poisoning); a
 * bidirectional embedding, override or isolate, which shows text in another order than it is read; a
 * control character other than tab, line feed and carriage return (a terminal acts on it: `ESC [8m` hides
 * what follows); a lone surrogate; and two invisible (default-ignorable) characters in a row, which is how
 * text is carried in zero-width characters or in the variation selectors after one emoji. One invisible
 * character between visible ones passes: a joiner in a Persian or Devanagari word, a right-to-left mark, the
 * variation selector of an emoji or an ideograph, a soft hyphen. So does a zero-width joiner right after a
 * variation selector, as in the emoji sequence ❤️‍🔥. But more than {@link MAX_ZERO_WIDTH_IN_ASCII} zero-width
 * characters each between two ASCII characters ({@link ZERO_WIDTH_IN_ASCII}) is text spread one invisible
 * character at a time: no Latin text needs them (the joiners are for other scripts and emoji).
 */
export function findHiddenText(text: string): string | undefined {
  if (PLAIN.test(text)) return undefined;
  const seen = text.replace(FLAG_TAGS, "\u{1f3f4}");
  const tag = TAG.exec(seen)?.[0];
  if (tag !== undefined)
    return `a tag character (${hex(tag)}): tags spell text the model reads and a person does not see`;
  const bidi = BIDI.exec(seen)?.[0];
  if (bidi !== undefined)
    return `a bidirectional control (${hex(bidi)}): it shows text in another order than it is read`;
  const control = CONTROL.exec(seen)?.[0];
  if (control !== undefined) return `a control character (${hex(control)})`;
  const lone = LONE_SURROGATE.exec(seen)?.[0];
  if (lone !== undefined) return `a lone surrogate (${hex(lone)})`;
  // each invisible character, and where the one before it ended: a run is two that touch
  let previous = "";
  let end = -1;
  for (const { 0: char, index } of seen.matchAll(INVISIBLE)) {
    if (index === end && !(char === "\u200d" && (previous === "\ufe0f" || previous === "\ufe0e"))) {
      return `invisible characters in a row (${hex(previous)} ${hex(char)}): a run of them carries text no person sees`;
    }
    previous = char;
    end = index + char.length;
  }
  let between = 0;
  let last = "";
  for (const { 0: char } of seen.matchAll(ZERO_WIDTH_IN_ASCII)) {
    between++;
    last = char;
  }
  if (between > MAX_ZERO_WIDTH_IN_ASCII)
    return `${between} zero-width characters between ASCII characters (the last ${hex(last)}): one between each two letters carries bits no person sees`;
  return undefined;
}

/** A member's name as a path shows it: as it is when plain, else as JSON (cut at 40, escaped). */
function segment(key: string): string {
  if (/^[A-Za-z0-9_$@-]{1,40}$/.test(key)) return key;
  return printable(JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key));
}

/**
 * Why a definition an upstream listed (a tool, prompt, resource or template) is not served for text the
 * model reads and a person does not see ({@link findHiddenText}) in any of its strings, or undefined when
 * it holds none. Every member is text the model reads (a description, a schema's property names, titles,
 * descriptions and `enum` values, `_meta`), so every string and every member's name is looked at, at any
 * depth. Said with where it is: `its inputSchema.properties.path.description holds a tag character (…)`.
 */
export function whyTextHidden(item: Readonly<Record<string, unknown>>): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value: item, path: "" }];
  while (stack.length > 0) {
    const { value, path } = stack.pop() as { value: unknown; path: string };
    if (typeof value === "string") {
      const why = findHiddenText(value);
      if (why !== undefined) return `its ${path} holds ${why}`;
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    const children: { value: unknown; path: string }[] = [];
    for (const [key, child] of Object.entries(value)) {
      const why = findHiddenText(key);
      if (why !== undefined) return `its ${path === "" ? "" : `${path} `}key ${segment(key)} holds ${why}`;
      children.push({ value: child, path: path === "" ? segment(key) : `${path}.${segment(key)}` });
    }
    // depth first, in the order written
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as { value: unknown; path: string });
  }
  return undefined;
}
