/**
 * Content scanning (§23.2 "content abuse → content scanning"): what an FAQ must not publish, checked when it
 * is published and whenever published content changes. Deterministic rules over the normalised text (NFKC,
 * zero-width characters removed, lower case) and the link targets; each finding is a category and a one-line
 * reason. The rules aim at what §23.1 names — phishing pages, credential harvesting, malware distribution, spam
 * and SEO manipulation — and spare ordinary help text ("never share your password", "reset your password in
 * Settings"). This is friction, not a classifier; the provider's other defences (noindex, handle rotation,
 * short TTLs, takedown by deletion) still apply.
 */
import type { FaqBody } from "./faq.js";
import { renderedLinks, renderSafeMarkdown, unsafeMarkdownReason } from "./safe-markdown.js";

/** Why content was refused. */
export type ContentFindingKind = "credential_harvesting" | "phishing" | "malicious_link" | "spam";

/** One finding: its category and a one-line, lowercase reason (no user input quoted). */
export interface ContentFinding {
  readonly kind: ContentFindingKind;
  readonly message: string;
}

/**
 * What a page shows as nothing: every default-ignorable code point (zero-width spaces and joiners, the soft hyphen,
 * the combining grapheme joiner, variation selectors, Hangul and Mongolian fillers, tags, bidirectional marks) and
 * the control characters that are not whitespace. Removed before matching, so `pass\u034fword` is `password`, as a
 * reader sees it (a short list of zero-width characters let every other invisible one split a word past the scan).
 */
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\u0000-\u0008\u000e-\u001f\u007f-\u009f]/gu;

/** NFKC, invisible characters removed, lower case, whitespace collapsed. */
export function normalizeText(s: string): string {
  return s.normalize("NFKC").replace(INVISIBLE, "").toLowerCase().replace(/\s+/g, " ").trim();
}

const SECRET =
  "(?:password|passcode|pin(?: code)?|login details|login credentials|credentials|credit card(?: number)?|card number|cvv|cvc|card security code|social security(?: number)?|ssn|bank account(?: number)?|routing number|seed phrase|recovery phrase|secret phrase|mnemonic|private key|2fa code|one[- ]time (?:pass)?code|otp|verification code|sms code)";
const ASK = new RegExp(
  `\\b(?:enter|type|provide|confirm|verify|submit|send|reply with|update|share|give|input|fill in|paste)\\b[^.!?\\n]{0,40}?\\b${SECRET}\\b`,
  "g",
);
const NEGATION = /\b(?:never|not|don't|do not|won't|will not|no one|nobody|nor|shouldn't|should not)\b/;

/** A request for a secret that is not negated in the same clause ("we will never ask you to enter …"). */
function asksForSecret(text: string): boolean {
  for (const m of text.matchAll(ASK)) {
    const before = text.slice(Math.max(0, m.index - 40), m.index);
    const clause = before.split(/[.!?;\n]/).pop() ?? "";
    if (!NEGATION.test(clause)) return true;
  }
  return false;
}

const THREAT =
  /\b(?:account|access|mailbox|wallet|card|profile)\b[^.!?\n]{0,30}\b(?:suspended|locked|disabled|terminated|deactivated|compromised|on hold|restricted|will be closed|will be deleted)\b/;
const VERIFY_ACCOUNT =
  /\b(?:verify|confirm|validate|unlock|restore|reactivate|secure)\b[^.!?\n]{0,20}\b(?:your )?(?:account|identity|wallet|mailbox|payment details|billing)\b/;
const URGENCY =
  /\b(?:within (?:\d+|twenty[- ]four|one|two) (?:hours?|days?)|immediately|urgent(?:ly)?|final (?:notice|warning)|act now|last chance|or (?:it|your account) will be)\b/;
const BRAND =
  /\b(?:paypal|apple id|icloud|microsoft|office ?365|outlook|netflix|amazon|bank of america|chase|wells fargo|coinbase|metamask|binance|google account|gmail|facebook|instagram|whatsapp|dhl|fedex|ups|usps|irs|hmrc)\b/;

/** Phishing: account threats, "verify your account", urgency and brand names together with a link. */
function phishingScore(text: string, links: number): number {
  return (
    (THREAT.test(text) ? 2 : 0) +
    (VERIFY_ACCOUNT.test(text) ? 1 : 0) +
    (URGENCY.test(text) ? 2 : 0) +
    (BRAND.test(text) ? 1 : 0) +
    (links > 0 ? 1 : 0)
  );
}

const SHORTENERS = new Set([
  "bit.ly",
  "tinyurl.com",
  "t.co",
  "goo.gl",
  "ow.ly",
  "is.gd",
  "buff.ly",
  "rebrand.ly",
  "cutt.ly",
  "shorturl.at",
  "rb.gy",
  "tiny.cc",
  "s.id",
  "v.gd",
  "t.ly",
  "lnkd.in",
]);
const EXECUTABLE =
  /\.(?:exe|scr|msi|bat|cmd|com|pif|apk|jar|js|vbs|ps1|dmg|pkg|app|deb|rpm|sh|hta|lnk|iso|img|zip|rar|7z)$/i;
const DOMAIN_IN_LABEL = /\b((?:[a-z0-9-]+\.)+[a-z]{2,})\b/;

/** The registrable-ish part of a host (last two labels; enough to tell `paypal.com` from `evil.example`). */
function baseDomain(host: string): string {
  return host
    .replace(/^www\./, "")
    .split(".")
    .slice(-2)
    .join(".");
}

/** Why one link (label + https target) is refused, or undefined. */
function linkFinding(label: string, href: string): string | undefined {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return "a link target is not a valid url";
  }
  const host = url.hostname.toLowerCase();
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(host) || host.startsWith("["))
    return "links to bare ip addresses are not allowed";
  if (host.split(".").some((l) => l.startsWith("xn--")))
    return "links to punycode (look-alike) domains are not allowed";
  if (SHORTENERS.has(host.replace(/^www\./, ""))) return "links through url shorteners are not allowed";
  if (EXECUTABLE.test(url.pathname)) return "links to executable or archive downloads are not allowed";
  const shown = DOMAIN_IN_LABEL.exec(normalizeText(label))?.[1];
  if (shown !== undefined && baseDomain(shown) !== baseDomain(host))
    return "a link's text names a different domain than its target";
  return undefined;
}

/** A word as a reader sees one: a run of letters and the marks on them (digits, spaces and punctuation split it). */
const WORD = /[\p{L}\p{M}]+/gu;
const LATIN = /\p{Script=Latin}/u;
/**
 * Cyrillic, Greek and Armenian letters drawn like Latin ones (after NFKC, case kept: `а е о р с у х ѕ і ј`, `Α Β Ε
 * Κ Ο Ρ Τ Χ`, `օ ո ս` …). Letters of those scripts that look like no Latin letter (`д`, `λ`, the micro sign's `μ`,
 * `Ω`) are left out, so "10 µm" or "5 kΩ" is no finding.
 */
const LOOKALIKE = /[аеорсухѕіјԁһԛԝӏүѵАВЕКМНОРСТХЅІЈҮԚԜӀοικνραυϲϳΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹօոսհզՕՍ]/u;

/**
 * Whether some word mixes Latin letters with look-alikes from another script (`pаypal` with a Cyrillic `а`,
 * `Αpple` with a Greek `Α`): a spoofed name or a word hidden from the other checks, since no one writes one word in
 * two scripts. Invisible characters are removed first (they would split the word for the scan, not for a reader);
 * a word all in one script (Russian, Greek) is fine. One pass over the words, each tested twice: linear time.
 */
function mixesLookalikeScripts(text: string): boolean {
  for (const [word] of text.normalize("NFKC").replace(INVISIBLE, "").matchAll(WORD))
    if (LOOKALIKE.test(word) && LATIN.test(word)) return true;
  return false;
}

const SPAM_WORDS =
  /\b(?:casino|online slots|viagra|cialis|porn|xxx|escort service|payday loan|replica watches|crypto giveaway|double your (?:bitcoin|btc|eth|crypto|money)|send \d+(?:\.\d+)? ?(?:btc|eth|usdt)|airdrop claim|guaranteed returns)\b/;
const MAX_LINKS_PER_ANSWER = 10;
const MAX_REPEATS = 4;

/**
 * The links of a Markdown answer: `[label](target)`, exactly those its page draws (a paragraph's lines joined, as
 * the renderer joins them: looking line by line let through every link whose text held a line break).
 */
function linksOf(md: string): { label: string; href: string }[] {
  return renderedLinks(md);
}

const ENTITY: Readonly<Record<string, string>> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#39;": "'",
};

/**
 * The text a reader sees of a Markdown answer: rendered, its tags dropped (a block's a line break), the escapes
 * read back. `pass**word**` is shown as "password": scanning only the raw text, where no such word is, let
 * emphasis or code inside a word hide it. (The rendered HTML holds no `<` or `&` but its own: the text is escaped.)
 */
export function shownText(md: string): string {
  return renderSafeMarkdown(md)
    .replace(/<[^>]*>/g, (tag) => (/^<\/?(?:p|li|ul|ol|h\d|pre)>$/.test(tag) ? "\n" : ""))
    .replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITY[e] ?? e);
}

/**
 * Scans an FAQ before it is published (or while published content changes): the first finding, or undefined
 * when it may be published. Each answer is read twice, as written (its link targets among it) and as shown
 * ({@link shownText}).
 */
export function scanFaq(body: FaqBody): ContentFinding | undefined {
  const parts = [body.title, body.description, ...body.questions.flatMap((q) => [q.question, q.answer])];
  for (const p of parts) {
    const unsafe = unsafeMarkdownReason(p);
    if (unsafe !== undefined) return { kind: "malicious_link", message: unsafe };
  }
  const links = body.questions.flatMap((q) => linksOf(q.answer));
  for (const l of links) {
    const why = linkFinding(l.label, l.href);
    if (why !== undefined) return { kind: "malicious_link", message: why };
  }
  const shown = body.questions.map((q) => shownText(q.answer));
  if ([...parts, ...shown].some(mixesLookalikeScripts))
    return {
      kind: "phishing",
      message: "a word mixes latin letters with look-alike cyrillic, greek or armenian ones (a disguised name or word)",
    };
  for (const [i, q] of body.questions.entries()) {
    const text = normalizeText(`${q.question}. ${q.answer}. ${shown[i] ?? ""}`);
    if (asksForSecret(text))
      return { kind: "credential_harvesting", message: "content asks readers for a password, code or card details" };
    if (phishingScore(text, linksOf(q.answer).length) >= 5)
      return { kind: "phishing", message: "content reads like a phishing message (account threat, urgency, link)" };
    if (linksOf(q.answer).length > MAX_LINKS_PER_ANSWER)
      return { kind: "spam", message: `an answer has more than ${MAX_LINKS_PER_ANSWER} links` };
  }
  const header = normalizeText(`${body.title}. ${body.description}`);
  if (phishingScore(header, linksOf(body.description).length) >= 5)
    return { kind: "phishing", message: "content reads like a phishing message (account threat, urgency, link)" };
  const all = normalizeText([...parts, ...shown].join(" \n "));
  if (asksForSecret(all))
    return { kind: "credential_harvesting", message: "content asks readers for a password, code or card details" };
  if (SPAM_WORDS.test(all)) return { kind: "spam", message: "content matches known spam patterns" };
  const seen = new Map<string, number>();
  for (const q of body.questions) {
    const k = normalizeText(q.answer);
    if (k.length < 20) continue;
    const n = (seen.get(k) ?? 0) + 1;
    seen.set(k, n);
    if (n > MAX_REPEATS) return { kind: "spam", message: "the same answer is repeated across many questions" };
  }
  return undefined;
}
