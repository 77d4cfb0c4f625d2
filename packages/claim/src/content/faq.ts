import { newContentId } from "../ids/random-ids.js";
import { unsafeMarkdownReason } from "./safe-markdown.js";

/** One question of an FAQ (§25). */
export interface FaqQuestion {
  readonly id: string;
  readonly question: string;
  readonly answer: string;
  readonly order: number;
}

/** Presentation settings; there is deliberately no CSS field (§14.3). */
export interface FaqSettings {
  readonly theme: "light" | "dark" | "auto";
  readonly accent_color: string;
  readonly show_search: boolean;
  readonly show_feedback: boolean;
}

/** The stored FAQ body (everything but ids and status). */
export interface FaqBody {
  readonly title: string;
  readonly slug: string;
  readonly description: string;
  readonly settings: FaqSettings;
  readonly questions: readonly FaqQuestion[];
}

/** The §28 limits. */
export const FAQ_LIMITS = {
  faqsPerSandbox: 5,
  questionsPerFaq: 50,
  titleChars: 100,
  descriptionChars: 500,
  questionChars: 500,
  answerBytes: 10 * 1024,
} as const;

/** Whether a string holds a lone surrogate: valid in JSON text, not I-JSON (RFC 7493), and not UTF-8 encodable. */
export function hasLoneSurrogate(s: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

/**
 * Why a text field cannot be stored as it is, or undefined: a control character other than tab and line breaks
 * (NUL, DEL and the C1 controls among them: invisible on the page, so `pass\u0085word` showed as a word the
 * content scan never saw); a bidirectional embedding, override or isolate character (U+202A–U+202E,
 * U+2066–U+2069: `\u202e.drowssap ruoy retne` shows as "enter your password." while it is stored, and scanned,
 * reversed); or a lone surrogate — valid in JSON text but not I-JSON, and not UTF-8: the page would show U+FFFD
 * where the content scan saw something else.
 */
function unstorableText(v: string, field: string): ContentIssue | undefined {
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/.test(v))
    return { code: "claim_invalid_request", message: `\`${field}\` has control characters` };
  if (/[\u202a-\u202e\u2066-\u2069]/.test(v))
    return {
      code: "claim_invalid_request",
      message: `\`${field}\` has bidirectional override, embedding or isolate characters (it would show in another order than it is stored)`,
    };
  if (hasLoneSurrogate(v))
    return { code: "claim_invalid_request", message: `\`${field}\` holds a lone surrogate (not valid I-JSON)` };
  return undefined;
}

/** A content validation problem: stable code + one-line message. */
export interface ContentIssue {
  readonly code: string;
  readonly message: string;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; issue: ContentIssue };

const DEFAULT_SETTINGS: FaqSettings = {
  theme: "auto",
  accent_color: "#2563eb",
  show_search: true,
  show_feedback: false,
};
const bad = (code: string, message: string): { ok: false; issue: ContentIssue } => ({
  ok: false,
  issue: { code, message },
});
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function unknownKey(v: Record<string, unknown>, allowed: readonly string[], where: string): ContentIssue | undefined {
  const extra = Object.keys(v).find((k) => !allowed.includes(k));
  if (extra === undefined) return undefined;
  const css = /css|style|svg|html|script/i.test(extra);
  return {
    code: css ? "claim_content_refused" : "claim_invalid_request",
    message: `${where}: unknown field \`${extra.slice(0, 40)}\`${css ? " (custom css, svg and html are not allowed)" : ""}`,
  };
}

function text(v: unknown, field: string, max: number, required: boolean): Parsed<string | undefined> {
  if (v === undefined && !required) return { ok: true, value: undefined };
  if (typeof v !== "string") return bad("claim_invalid_request", `\`${field}\` must be a string`);
  if (required && v.trim() === "") return bad("claim_invalid_request", `\`${field}\` must not be empty`);
  if ([...v].length > max) return bad("claim_limit_exceeded", `\`${field}\` is longer than ${max} characters`);
  const wrong = unstorableText(v, field);
  if (wrong !== undefined) return { ok: false, issue: wrong };
  if (/<\s*svg|<\s*style|<\s*script/i.test(v))
    return bad("claim_content_refused", `\`${field}\`: svg, style and script are not allowed`);
  return { ok: true, value: v };
}

/** Validates settings (partial allowed; merged onto `base`). */
export function parseSettings(v: unknown, base: FaqSettings = DEFAULT_SETTINGS): Parsed<FaqSettings> {
  if (v === undefined) return { ok: true, value: base };
  if (!isObj(v)) return bad("claim_invalid_request", "`settings` must be an object");
  const extra = unknownKey(v, ["theme", "accent_color", "show_search", "show_feedback"], "settings");
  if (extra !== undefined) return { ok: false, issue: extra };
  const s = { ...base, ...v } as Record<string, unknown>;
  if (!["light", "dark", "auto"].includes(s["theme"] as string))
    return bad("claim_invalid_request", "`settings.theme` must be light, dark or auto");
  if (typeof s["accent_color"] !== "string" || !/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s["accent_color"]))
    return bad("claim_invalid_request", "`settings.accent_color` must be `#rgb` or `#rrggbb`");
  if (typeof s["show_search"] !== "boolean" || typeof s["show_feedback"] !== "boolean")
    return bad("claim_invalid_request", "`settings.show_search` and `settings.show_feedback` must be booleans");
  return { ok: true, value: s as unknown as FaqSettings };
}

/** Validates one question's input; `prev` supplies fields an update leaves out. */
export function parseQuestion(v: unknown, order: number, prev?: FaqQuestion): Parsed<FaqQuestion> {
  if (!isObj(v)) return bad("claim_invalid_request", "a question must be an object");
  const extra = unknownKey(v, ["question", "answer", "order"], "question");
  if (extra !== undefined) return { ok: false, issue: extra };
  const q = text(v["question"] ?? prev?.question, "question", FAQ_LIMITS.questionChars, true);
  if (!q.ok) return q;
  const a = v["answer"] ?? prev?.answer;
  if (typeof a !== "string" || a.trim() === "")
    return bad("claim_invalid_request", "`answer` must be a non-empty string");
  if (Buffer.byteLength(a, "utf8") > FAQ_LIMITS.answerBytes)
    return bad("claim_limit_exceeded", "`answer` is larger than 10 KB");
  const wrong = unstorableText(a, "answer");
  if (wrong !== undefined) return { ok: false, issue: wrong };
  const unsafe = unsafeMarkdownReason(a);
  if (unsafe !== undefined) return bad("claim_content_refused", `\`answer\`: ${unsafe}`);
  const o = v["order"] ?? prev?.order ?? order;
  if (!Number.isSafeInteger(o)) return bad("claim_invalid_request", "`order` must be an integer");
  return {
    ok: true,
    value: { id: prev?.id ?? newContentId("q"), question: q.value ?? "", answer: a, order: o as number },
  };
}

/** Validates an FAQ create (`prev` undefined) or update (`prev` = stored body; `questions` then not accepted). */
export function parseFaq(v: unknown, prev?: FaqBody): Parsed<FaqBody> {
  if (!isObj(v)) return bad("claim_invalid_request", "the body must be a JSON object");
  const allowed =
    prev === undefined
      ? ["title", "slug", "description", "settings", "questions"]
      : ["title", "slug", "description", "settings"];
  const extra = unknownKey(v, allowed, "faq");
  if (extra !== undefined) return { ok: false, issue: extra };
  const title = text(v["title"] ?? prev?.title, "title", FAQ_LIMITS.titleChars, true);
  if (!title.ok) return title;
  const description = text(
    v["description"] ?? prev?.description ?? "",
    "description",
    FAQ_LIMITS.descriptionChars,
    false,
  );
  if (!description.ok) return description;
  const slug = v["slug"] ?? prev?.slug ?? slugify(title.value ?? "");
  if (typeof slug !== "string" || !/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/.test(slug))
    return bad("claim_invalid_request", "`slug` must be lowercase letters, digits and dashes (1–64)");
  const settings = parseSettings(v["settings"], prev?.settings);
  if (!settings.ok) return settings;
  let questions: FaqQuestion[] = prev === undefined ? [] : [...prev.questions];
  if (prev === undefined && v["questions"] !== undefined) {
    if (!Array.isArray(v["questions"])) return bad("claim_invalid_request", "`questions` must be an array");
    if (v["questions"].length > FAQ_LIMITS.questionsPerFaq)
      return bad("claim_limit_exceeded", "more than 50 questions");
    questions = [];
    for (const [i, raw] of v["questions"].entries()) {
      const q = parseQuestion(raw, i);
      if (!q.ok) return bad(q.issue.code, `questions[${i}]: ${q.issue.message}`);
      questions.push(q.value);
    }
  }
  const body = {
    title: title.value ?? "",
    slug,
    description: description.value ?? "",
    settings: settings.value,
    questions,
  };
  return { ok: true, value: body };
}

/** A URL-safe slug from a title (`faq` when nothing usable is left). */
export function slugify(title: string): string {
  const s = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");
  return s === "" ? "faq" : s;
}
