/**
 * A deterministic scorer for instruction-like language in untrusted content. It only ever raises the stakes
 * of later calls (they escalate); it never grants anything, so a miss costs nothing that provenance does not
 * already catch and a false alarm costs one question to a person.
 */
import { extractValueTokens, unescapeLiterals } from "./value-tokens.js";

/** The kinds of evidence the scorer counts. */
export type InstructionSignalKind =
  "override" | "secrecy" | "addressed_to_model" | "imperative" | "tool_name" | "urgency" | "address";

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

/** Longest prefix of a text that is scanned; the rest is ignored (the signals seen so far stand). */
export const MAX_SCANNED_CHARS = 1_000_000;

const OVERRIDE: readonly RegExp[] = [
  /\b(?:ignore|disregard|forget|override|skip)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+|my\s+)?(?:previous|prior|above|earlier|preceding|original|system|other)\s+(?:instructions?|prompts?|messages?|directions?|rules?|tasks?|guidelines?)/gi,
  /\b(?:new|updated|real|actual|important)\s+instructions?\b/gi,
  /\b(?:system\s+prompt|developer\s+mode|jailbreak|you\s+are\s+now|from\s+now\s+on)\b/gi,
  /\bbefore\s+(?:you\s+)?(?:can\s+)?(?:solve|complete|continue|finish|answer|do)\b[^.\n]{0,80}\b(?:task|request|question)/gi,
  /\binstead\s*,?\s+(?:you\s+(?:should|must)|please)\b/gi,
];

const SECRECY: readonly RegExp[] = [
  /\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|notify|alert|ask)\s+(?:the\s+)?(?:user|owner|human|anyone)/gi,
  /\bwithout\s+(?:asking|telling|informing|notifying|the\s+user|confirmation|permission)/gi,
];

const ADDRESSED: readonly RegExp[] = [
  /\b(?:dear\s+|hey\s+|attention\s+)?(?:ai\s+)?(?:assistant|language\s+model|llm|chatbot|ai\s+agent)\b/gi,
  /\bas\s+an\s+ai\b/gi,
];

const URGENCY: readonly RegExp[] = [
  /\b(?:urgent(?:ly)?|immediately|asap|right\s+now|at\s+once)\b/gi,
  /<\/?(?:information|instructions?|system|important|admin)>|\[(?:system|admin|instructions?)\]|<\|im_start\|>/gi,
];

const IMPERATIVE_VERBS = new Set(
  (
    "send forward email mail transfer pay wire delete remove erase click visit open go call text invite add share " +
    "post publish create update change reset write reply download upload run execute install grant give tell book " +
    "reserve make do schedule move copy export submit buy order approve confirm sign login log"
  ).split(" "),
);
const LEAD_INS = new Set(["please", "now", "then", "also", "and", "first", "next", "kindly", "just", "immediately"]);
const TOOL_NAME =
  /\b(?:send|read|get|list|search|create|update|delete|transfer|post|invite|add|remove|share|pay|write|execute|run|schedule|reschedule|append|download|upload|visit|book|reserve)_[a-z0-9_]+\b/g;

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
    for (const match of text.matchAll(pattern)) out.push({ kind, match: cut(match[0]), weight });
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
    while (i < words.length - 1 && LEAD_INS.has(words[i] as string)) i++;
    const verb = words[i];
    if (verb !== undefined && IMPERATIVE_VERBS.has(verb) && words.length - i >= 2) {
      out.push({ kind: "imperative", match: cut(sentence), weight: 0.15 });
    }
  }
}

function toolMentions(text: string, options: DetectInstructionsOptions, out: InstructionSignal[]): void {
  for (const match of text.matchAll(TOOL_NAME)) out.push({ kind: "tool_name", match: cut(match[0]), weight: 0.2 });
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
  addressed_to_model: 0.3,
  imperative: 0.45,
  tool_name: 0.3,
  urgency: 0.3,
  address: 0.1,
};

/**
 * Scores a text for instruction-like language: policy overrides (`ignore previous instructions`, weight 0.6),
 * secrecy (`do not tell the user`, 0.5), words addressed to the model (0.3), imperative sentences (0.15 each,
 * at most 0.45), tool names (0.2, at most 0.3), urgency and fake markup (0.2, at most 0.3), and addresses or
 * URLs (0.1, counted only beside another signal). Deterministic; the score is the capped sum, at most 1.
 */
export function detectInstructions(text: string, options: DetectInstructionsOptions = {}): InstructionReport {
  const scanned = unescapeLiterals(text.length > MAX_SCANNED_CHARS ? text.slice(0, MAX_SCANNED_CHARS) : text);
  const signals: InstructionSignal[] = [];
  collect(scanned, OVERRIDE, "override", 0.6, signals);
  collect(scanned, SECRECY, "secrecy", 0.5, signals);
  collect(scanned, ADDRESSED, "addressed_to_model", 0.3, signals);
  collect(scanned, URGENCY, "urgency", 0.2, signals);
  imperatives(scanned, signals);
  toolMentions(scanned, options, signals);
  if (signals.length > 0) {
    const token = extractValueTokens(scanned).find((t) => t.kind !== "account");
    if (token !== undefined) signals.push({ kind: "address", match: cut(token.value), weight: 0.1 });
  }
  const byKind = new Map<InstructionSignalKind, number>();
  for (const s of signals) byKind.set(s.kind, (byKind.get(s.kind) ?? 0) + s.weight);
  let score = 0;
  for (const [kind, sum] of byKind) score += Math.min(sum, KIND_CAP[kind]);
  score = Math.min(1, Math.round(score * 1000) / 1000);
  return { score, signals, contains_instructions: score >= INSTRUCTION_THRESHOLD };
}
