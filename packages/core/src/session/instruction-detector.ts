/**
 * A deterministic scorer for instruction-like language in untrusted content. It only ever raises the stakes
 * of later calls (they escalate); it never grants anything, so a miss costs nothing that provenance does not
 * already catch and a false alarm costs one question to a person.
 */
import { matchesOf } from "./each-match.js";
import { decodeEmbeddedText } from "./encoded-text.js";
import { decodeCharacterReferences, extractValueTokens, unescapeLiterals } from "./value-tokens.js";

/** The kinds of evidence the scorer counts. */
export type InstructionSignalKind =
  | "override"
  | "secrecy"
  | "authority_claim"
  | "addressed_to_model"
  | "fake_markup"
  | "fake_turn"
  | "directive"
  | "imperative"
  | "tool_name"
  | "urgency"
  | "address"
  | "unscanned"
  | "hidden_text";

/** One piece of evidence: its kind, the text that showed it (cut at 60 characters) and its weight. */
export interface InstructionSignal {
  readonly kind: InstructionSignalKind;
  readonly match: string;
  readonly weight: number;
}

/** The scorer's verdict on one text. */
export interface InstructionReport {
  /** In [0, 1]; at or above {@link INSTRUCTION_THRESHOLD} the text counts as containing instructions. */
  readonly score: number;
  readonly signals: readonly InstructionSignal[];
  readonly contains_instructions: boolean;
}

/** Options of {@link detectInstructions}. */
export interface DetectInstructionsOptions {
  /** Tool names the agent can call (`send_email`, `email.send`); a mention of one is a signal. */
  readonly toolNames?: readonly string[];
}

/** The score at which a text is marked `contains_instructions`. */
export const INSTRUCTION_THRESHOLD = 0.5;

/**
 * Longest prefix of a text that is scanned (as much as a session keeps of one result). A longer text is not
 * read to its end, so it counts as containing instructions (signal `unscanned`): what the scorer did not read
 * could say anything.
 */
export const MAX_SCANNED_CHARS = 2_000_000;

const OVERRIDE: readonly RegExp[] = [
  /\b(?:ignore|disregard|forget|override|skip|neglect)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+)?(?:previous|prior|above|earlier|preceding|original|system|other|initial)\s+\w+/gi,
  /\b(?:new|updated|real|actual|important|revised|changed)\s+(?:\w+\s+)?instructions?\b/gi,
  /\b(?:system\s+prompt|developer\s+mode|jailbreak|you\s+are\s+now|from\s+now\s+on|system\s+override|maintenance\s+mode)\b/gi,
  /\bbefore\s+(?:you\s+)?(?:can\s+)?(?:solve|complete|continue|finish|answer|do|proceed)\b[^.\n]{0,80}\b(?:task|request|question)/gi,
  /\binstead\s*,?\s+(?:you\s+(?:should|must)|please)\b/gi,
  /\b(?:rules?|instructions?|guidelines?)\b[^.\n]{0,40}\bno\s+longer\s+appl(?:y|ies)\b/gi,
  /\b(?:decode|translate|unscramble)\s+(?:this|the\s+following|it)\b[^.\n]{0,20}\band\s+(?:follow|execute|obey|do)\b/gi,
  /\bstrictly\s+adhere\s+to\s+the\s+following\b/gi,
  // German, French, Spanish, Italian: "forget/ignore the previous instructions" (accents dropped: `regles`)
  /\b(?:vergiss|ignoriere|missachte)\b[^.\n]{0,30}\b(?:anweisungen|instruktionen|regeln)\b/gi,
  /\bignore[sz]?\b[^.\n]{0,20}\b(?:instructions|consignes|regles)\b/gi,
  /\b(?:ignora|olvida)\b[^.\n]{0,20}\b(?:instrucciones|istruzioni|reglas)\b/gi,
  // Portuguese and Dutch (accents are dropped before scoring: `instruções` reads `instrucoes`)
  /\b(?:ignore|ignora|esqueca|desconsidere)\b[^.\n]{0,30}\binstrucoes\b/gi,
  /\b(?:negeer|vergeet)\b[^.\n]{0,30}\b(?:instructies|aanwijzingen|regels)\b/gi,
  // Russian (`й` reads `и` once marks are dropped), Chinese, Japanese
  /(?:игнорируи(?:те)?|забудь(?:те)?|не\s+обращаи(?:те)?\s+внимания\s+на)[^.\n]{0,40}(?:инструкци|указани|правил)/gi,
  /(?:忽略|无视|無視|忘记|忘記)[^。\n]{0,20}(?:指令|指示|说明|說明|规则|規則)/g,
  /(?:指示|命令|ルール)[^。\n]{0,10}(?:無視|忘れ)/g,
];

const SECRECY: readonly RegExp[] = [
  /\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|notify|alert|ask|confirm\s+with|report|reveal)\b[^.\n]{0,25}\b(?:user|owner|human|anyone|nobody)\b/gi,
  /\b(?:do\s+not|don'?t|never)\s+(?:report|mention|reveal)\s+(?:these|this|the|any)\s+(?:steps|actions|instructions|changes)\b/gi,
  /\bwithout\s+(?:asking|telling|informing|notifying|the\s+user|confirmation|permission|confirming)/gi,
  /\b(?:so\s+(?:that\s+)?nobody\s+(?:notices|knows|finds\s+out)|secretly|behind\s+the\s+user'?s\s+back)\b/gi,
];

const AUTHORITY: readonly RegExp[] = [
  /\b(?:the\s+)?(?:user|owner|account\s+holder)\s+(?:has\s+)?(?:already\s+)?(?:approved|authori[sz]ed|asked|requested|wants\s+you|agreed)\b/gi,
  /\b(?:has|have)\s+authori[sz]ed\s+you\b/gi,
  /\bpolicy\s+update\b/gi,
  /\btell\s+the\s+user\s+(?:to|that)\b/gi,
  /\bon\s+behalf\s+of\s+the\s+user\b/gi,
];

const ADDRESSED: readonly RegExp[] = [
  /\b(?:dear\s+|hey\s+|attention\s+)?(?:ai\s+)?(?:assistants?|language\s+models?|llms?|chatbots?|ai\s+agents?|ai\s+systems?)\b/gi,
  /\bas\s+an\s+ai\b/gi,
  /\bto\s+you,?\s+(?:the\s+)?(?:ai|assistant|agent|model|gpt|claude|gemini|llama)/gi,
  /\b(?:bot|agent|ai|model)\s*[:,]\s/gi,
  /\bif\s+you\s+are\s+an?\s+(?:ai|llm|bot|agent|assistant|language\s+model)/gi,
  /\b(?:note|reminder|message|instructions?)\s+(?:to|for)\s+(?:the\s+)?(?:ai|automated|agent|bot|assistant|llm)/gi,
  /\bwhen\s+(?:you\s+)?(?:review|read|process|summari[sz]e|see|open|parse)(?:ing)?\s+this\b/gi,
  /\bwhile\s+(?:you\s+are\s+)?(?:helping|assisting|working)\s+(?:with|on)\s+this\b/gi,
  /\b(?:as\s+part\s+of|after\s+you\s+(?:do|finish))\s+(?:this|the|that)\s+task\b/gi,
  /\bthis\s+is\s+an\s+important\s+message\s+from\b/gi,
  /\b(?:everything|all)\s+you\s+(?:have\s+)?(?:read|seen)\b/gi,
];

const MARKUP: readonly RegExp[] = [
  /<\/?(?:information|instructions?|system|important|admin|data)>|<\|im_start\|>|<!--\s*(?:assistant|ai|agent|system)/gi,
  /[[<(]{1,2}\s*(?:hidden|agent|ai|assistant|system|admin|instructions?|system_message)\b[^\]>)\n]{0,30}[:\]>)]/gi,
  /#{2,}\s*\(?\s*system/gi,
];

const URGENCY: readonly RegExp[] = [/\b(?:urgent(?:ly)?|immediately|asap|right\s+now|at\s+once|important!+)/gi];

/**
 * A line that poses as a turn of the conversation (`User: …` then `Assistant: …`), or a header that claims the
 * system's or an administrator's voice at the start of a line or sentence (`###(system_message)`, `[SYSTEM]`, `<|system|>`).
 */
const FAKE_TURN: readonly RegExp[] = [
  /(?:^|\n|\/)\s*(?:user|human)\s*:[^\n]*(?:\n|\/)\s*(?:assistant|ai|system)\s*:/gi,
  /(?:^|\n|[.!?])[ \t]*(?:#{2,}\s*\(?|\[{1,2}|\(|<\|?)\s*(?:system|admin|administrator|developer)(?:[ _-]?(?:message|prompt|note|override))?\s*(?:\]{1,2}|\)|\|?>)/gi,
];

const IMPERATIVE_VERBS = new Set(
  (
    "send forward email mail transfer pay wire delete remove erase click visit open go call text invite add share " +
    "post publish create update change reset write reply download upload run execute install grant give tell book " +
    "reserve make do schedule move copy export submit buy order approve confirm sign login log concatenate " +
    "get find fetch retrieve collect gather look search read list check say recommend summarize summarise"
  ).split(" "),
);
/** Verbs of actions that move data or money somewhere: with an address in the same sentence, a directive. */
const DIRECTIVE =
  /\b(?:send|forward|email|e-mail|mail|transfer|pay|wire|post|share|invite|upload|export|refund|dm|message)\b/i;
/** A "word" holding markup characters: skipped before a sentence's first word. */
const MARKUP_WORD = /[#()[\]<>|{}*]/;
const LEAD_INS = new Set(["please", "now", "then", "also", "and", "first", "next", "kindly", "just", "immediately"]);
const TOOL_NAME =
  /\b(?:send|read|get|list|search|create|update|delete|transfer|post|invite|add|remove|share|pay|write|execute|run|schedule|reschedule|append|download|upload|visit|book|reserve)_[a-z0-9_]+\b/g;

/**
 * Latin look-alikes (Cyrillic, Greek, Armenian, Latin small capitals), undone before scoring. A letter of
 * another script inside a Latin word reads as the Latin letter to a model and to a person.
 */
const HOMOGLYPHS: Readonly<Record<string, string>> = {
  ...pairs("а a е e о o р p с c у y х x і i ј j ѕ s ԁ d ɡ g к k м m н h т t в b һ h ӏ l ԝ w ԛ q ɑ a"),
  ...pairs("А A Е E О O Р P С C Т T Х X І I Ј J Ѕ S К K М M Н H В B"),
  ...pairs("ο o α a ι i υ u ν v κ k τ t ρ p ε e η n ω w χ x"),
  ...pairs("Α A Β B Ε E Ζ Z Η H Ι I Κ K Μ M Ν N Ο O Ρ P Τ T Υ Y Χ X"),
  ...pairs("ս u օ o ց g հ h ո n"),
  ...pairs("ᴀ a ʙ b ᴄ c ᴅ d ᴇ e ғ f ɢ g ʜ h ɪ i ᴊ j ᴋ k ʟ l ᴍ m ɴ n ᴏ o ᴘ p ǫ q ʀ r ꜱ s ᴛ t ᴜ u ᴠ v ᴡ w ʏ y ᴢ z"),
};
const LATIN_LETTER = /[A-Za-z\u00C0-\u024F]/;
const HOMOGLYPH = new RegExp(`[${Object.keys(HOMOGLYPHS).join("")}]`, "gu");

function pairs(list: string): Record<string, string> {
  const out: Record<string, string> = {};
  const items = list.split(" ");
  for (let i = 0; i + 1 < items.length; i += 2) out[items[i] as string] = items[i + 1] as string;
  return out;
}

/**
 * Text with every look-alike letter read as its Latin letter and accents dropped, wherever it stands (the scorer
 * folds only in words with Latin letters): `mаrk@аttacker.example` with Cyrillic `а` is `mark@attacker.example`.
 * For provenance's untrusted side only, where a fold can only find more taint; never for what the user vouches
 * for, since a look-alike address is another address.
 */
export function latinSkeleton(text: string): string {
  if (ASCII_TEXT.test(text)) return text;
  return text
    .normalize("NFKD")
    .replace(INVISIBLE, "")
    .normalize("NFKC")
    .replace(HOMOGLYPH, (ch) => HOMOGLYPHS[ch] ?? ch);
}

// eslint-disable-next-line no-control-regex -- the whole ASCII range, control characters included
const ASCII_TEXT = /^[\u0000-\u007f]*$/;

/** Format characters (zero-width, soft hyphen, bidi controls, tags) and combining marks (accents). */
const INVISIBLE = /[\p{Cf}\p{Mn}]/gu;

function canonical(text: string): string {
  // accents come off too (`Ig\u0301nore` composes to `Igńore`): decomposed, marks dropped, composed again
  const decoded = decodeCharacterReferences(text);
  // ASCII text is its own NFKD and NFKC, holds no format character, mark or look-alike: none of the passes
  // below changes it
  const ascii = ASCII_TEXT.test(decoded);
  const plain = ascii ? decoded : decoded.normalize("NFKD").replace(INVISIBLE, "").normalize("NFKC");
  // a look-alike is folded in a word that has Latin letters or is all look-alikes (`ѕуѕтем`); Russian or Greek
  // words keep their letters, so the phrases of those languages are read as written
  const latin = ascii
    ? plain
    : plain.replace(/[\p{L}\p{N}]+/gu, (word) =>
        LATIN_LETTER.test(word) || [...word].every((ch) => ch in HOMOGLYPHS || /\p{N}/u.test(ch))
          ? word.replace(HOMOGLYPH, (ch) => HOMOGLYPHS[ch] ?? ch)
          : word,
      );
  // "I g n o r e   p r e v i o u s": single letters separated by single spaces become one word
  return latin.replace(/\b(?:\p{L} ){3,}\p{L}\b/gu, (run) => run.replace(/ /g, ""));
}

/** Tags the markup signals read (`<INFORMATION>`, `<system>`); every other tag is dropped from the words. */
const SIGNAL_TAG = /^(?:information|instructions?|system|important|admin|data)$/i;
const TAG = /<\/?([a-z][\w-]*)(?:\s[^<>]{0,200})?\/?>/gi;

/**
 * The words a reader sees: HTML tags (`<span>Ignore</span>`, `Ig<b></b>nore`) and Markdown emphasis inside a
 * word (`Ig**nore**`) dropped, so markup cannot split a phrase the signals look for.
 */
function visibleWords(text: string): string {
  const untagged = text.includes("<")
    ? text.replace(TAG, (tag, name: string) => (SIGNAL_TAG.test(name) ? tag : ""))
    : text;
  return untagged.replace(/(?<=\p{L})[*`~]+(?=\p{L})/gu, "");
}

function cut(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > 60 ? `${one.slice(0, 60)}…` : one;
}

function collect(
  text: string,
  patterns: readonly RegExp[],
  kind: InstructionSignalKind,
  weight: number,
  out: InstructionSignal[],
): void {
  for (const pattern of patterns) {
    for (const match of matchesOf(pattern, text)) out.push({ kind, match: cut(match[0]), weight });
  }
}

function imperatives(text: string, out: InstructionSignal[]): void {
  for (const sentence of text.split(/[.!?\n:;]+|\s-\s/)) {
    const words = sentence
      .trim()
      .toLowerCase()
      .split(/[\s,]+/)
      .filter((w) => w.length > 0);
    let i = 0;
    // lead-ins (`please`, `now`) and markup before the first word (`###(system message)`, `<|system|>`)
    while (i < words.length - 1 && (LEAD_INS.has(words[i] as string) || MARKUP_WORD.test(words[i] as string))) i++;
    const verb = words[i];
    if (verb !== undefined && IMPERATIVE_VERBS.has(verb) && words.length - i >= 2) {
      out.push({ kind: "imperative", match: cut(sentence), weight: 0.1 });
    }
  }
}

/** A sentence that moves data or money (`send`, `forward`, `transfer`, …) to an address written beside it. */
function directives(text: string, out: InstructionSignal[]): void {
  for (const sentence of text.split(/(?<=[.!?])\s+|\n+/)) {
    if (sentence.length > 600 || !DIRECTIVE.test(sentence)) continue;
    if (extractValueTokens(sentence).some((t) => t.kind !== "host")) {
      out.push({ kind: "directive", match: cut(sentence), weight: 0.2 });
    }
  }
}

function toolMentions(text: string, options: DetectInstructionsOptions, out: InstructionSignal[]): void {
  for (const match of matchesOf(TOOL_NAME, text)) out.push({ kind: "tool_name", match: cut(match[0]), weight: 0.2 });
  const lower = text.toLowerCase();
  for (const name of options.toolNames ?? []) {
    if (name.length >= 4 && lower.includes(name.toLowerCase())) {
      out.push({ kind: "tool_name", match: cut(name), weight: 0.2 });
    }
  }
}

/** Caps each kind's contribution so that one kind repeated cannot reach the threshold alone (except override). */
const KIND_CAP: Readonly<Record<InstructionSignalKind, number>> = {
  override: 1,
  secrecy: 0.5,
  authority_claim: 0.4,
  addressed_to_model: 0.45,
  fake_markup: 0.3,
  fake_turn: 0.4,
  directive: 0.3,
  imperative: 0.2,
  tool_name: 0.3,
  urgency: 0.2,
  address: 0.1,
  unscanned: 1,
  hidden_text: 1,
};

/** Signals that say who the text speaks to or what it claims to be; beside one, an address counts. */
const STRONG: ReadonlySet<InstructionSignalKind> = new Set([
  "override",
  "secrecy",
  "authority_claim",
  "addressed_to_model",
  "fake_markup",
  "fake_turn",
  "tool_name",
  "unscanned",
]);

/** Highest score of a text with weak signals only: a text needs a strong signal to count as instructions. */
export const WEAK_ONLY_CAP = 0.4;

/**
 * Scores a text for instruction-like language. Strong signals: policy overrides (`ignore previous
 * instructions`, also in German, French, Spanish, Italian, Portuguese, Dutch, Russian, Chinese, Japanese, 0.6), secrecy (`do not tell the user`, 0.5), claims of the
 * user's authority (`the user has already approved it`, 0.4), a fake conversation turn or a line claiming the system's voice (`###(system_message)`, 0.4), words addressed
 * to the model (`To the AI:`, `if you are an LLM`, 0.3, at most 0.45), fake markup (`<INFORMATION>`,
 * `[hidden: …]`, 0.3) and tool names (0.2, at most 0.3). Weak signals, which ordinary recipes, manuals and TODO
 * lists also show: a sentence sending data or money to an address (0.2, at most 0.3), imperative sentences
 * (0.1 each, at most 0.2) and urgency (0.1, at most 0.2); an address or URL counts 0.1 only beside a strong
 * signal, and without a strong signal the score stays below the threshold ({@link WEAK_ONLY_CAP}). What a reader sees is scored: escapes (`\\u0049`, `&#73;`) are decoded, format characters and accents dropped, look-alike letters read as Latin, spaced-out letters joined, HTML tags and emphasis inside words dropped, words joined by underscores read as words, and Base64 and percent-encoded runs read decoded too. A text
 * longer than {@link MAX_SCANNED_CHARS} is read that far and counts as instructions (`unscanned`). Deterministic;
 * the score is the capped sum, at most 1.
 */
export function detectInstructions(text: string, options: DetectInstructionsOptions = {}): InstructionReport {
  const head = text.length > MAX_SCANNED_CHARS ? text.slice(0, MAX_SCANNED_CHARS) : text;
  // An escaped line break (`\n` in a result serialized as a quoted string) still starts a line.
  const unescaped = unescapeLiterals(head.replace(/\\[nr]/g, "\n"));
  // what Base64 and percent-encoded runs decode to is read too, on lines of its own
  const decoded = decodeEmbeddedText(unescaped);
  const scanned = canonical(decoded === "" ? unescaped : `${unescaped}\n${decoded}`);
  // Words joined into an identifier (`External_Ignore_your_previous_instructions`) are read as words; tool
  // names are looked for in the text as it is.
  const visible = visibleWords(scanned);
  const words = visible.includes("_") ? visible.replace(/_/g, " ") : visible;
  const signals: InstructionSignal[] = [];
  collect(words, OVERRIDE, "override", 0.6, signals);
  collect(words, SECRECY, "secrecy", 0.5, signals);
  collect(words, AUTHORITY, "authority_claim", 0.4, signals);
  collect(words, ADDRESSED, "addressed_to_model", 0.3, signals);
  collect(scanned, MARKUP, "fake_markup", 0.3, signals);
  collect(words, FAKE_TURN, "fake_turn", 0.4, signals);
  collect(words, URGENCY, "urgency", 0.1, signals);
  imperatives(words, signals);
  directives(scanned, signals);
  toolMentions(scanned, options, signals);
  if (head.length < text.length) {
    const unread = `${text.length - head.length} characters past the first ${MAX_SCANNED_CHARS} not read`;
    signals.push({ kind: "unscanned", match: unread, weight: INSTRUCTION_THRESHOLD });
  }
  if (signals.some((s) => STRONG.has(s.kind))) {
    const token = extractValueTokens(scanned).find((t) => t.kind !== "account");
    if (token !== undefined) signals.push({ kind: "address", match: cut(token.value), weight: 0.1 });
  }
  const byKind = new Map<InstructionSignalKind, number>();
  for (const s of signals) byKind.set(s.kind, (byKind.get(s.kind) ?? 0) + s.weight);
  let score = 0;
  for (const [kind, sum] of byKind) score += Math.min(sum, KIND_CAP[kind]);
  if (!signals.some((s) => STRONG.has(s.kind))) score = Math.min(score, WEAK_ONLY_CAP);
  score = Math.min(1, Math.round(score * 1000) / 1000);
  return { score, signals, contains_instructions: score >= INSTRUCTION_THRESHOLD };
}

/**
 * The report for a text that carried hidden characters (Unicode tag characters, bidi overrides or isolates),
 * removed before the agent read it: text meant for the model but not for the user is an injection attempt
 * by definition, so it counts as containing instructions (signal `hidden_text`, score 1) whatever else it says.
 */
export function withHiddenText(report: InstructionReport): InstructionReport {
  const signal: InstructionSignal = { kind: "hidden_text", match: "tag characters or bidi controls", weight: 1 };
  return { score: 1, signals: [...report.signals, signal], contains_instructions: true };
}
