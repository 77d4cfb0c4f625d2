/**
 * `GET /v1/consent` as a bounded answer: a page of the waiting requests (`limit`, a cursor), each one's
 * arguments shortened to {@link LISTED_ARGUMENTS_BYTES} and every other long text to its ends, with a
 * `shortened` marker saying how much was left out and where the whole request is (`GET /v1/consent/{id}`);
 * the page stops at {@link CONSENT_LIST_BYTES}. A flood of calls with megabyte arguments (any agent's token
 * can raise them, up to the pending cap) cannot make one listing read or send the flood whole.
 */
import { elide } from "@acp/proxy";
import type { PendingConsentRow, PendingCursor, PendingPage } from "@acp/store";
import { HttpError } from "../http/error-body.js";
import { viewConsent, type ConsentView } from "./consent-view.js";

/** Requests on one page when the query names no `limit`. */
export const DEFAULT_CONSENT_PAGE = 50;
/** Most requests on one page. */
export const MAX_CONSENT_PAGE = 200;
/** At most this many bytes of JSON of one request's arguments in a listing (the first values, in order). */
export const LISTED_ARGUMENTS_BYTES = 4096;
/** An argument's text longer than this is shown by its two ends in a listing. */
export const LISTED_ARGUMENT_CHARS = 512;
/** Any other text of a listed request (its reasons, its agent's name…) longer than this is shown by its ends. */
export const LISTED_TEXT_CHARS = 1024;
/** One listing's answer stops before this many bytes of JSON (it always holds one request). */
export const CONSENT_LIST_BYTES = 1024 * 1024;
/** What one listing reads of the stored requests, beyond the first (their JSON as stored, before shortening). */
export const CONSENT_LIST_READ_BYTES = 8 * 1024 * 1024;

/** What a listed request's `shortened` says: how much was left out, and where the whole request is. */
export interface ConsentShortened {
  /** Bytes of JSON of `request`, `reasons` and `answer` left out (the whole's size less the listed one's). */
  readonly omitted_bytes: number;
  /** The arguments lost values, not only the middles of long texts. */
  readonly arguments_cut: boolean;
  /** Where the whole request is: `/v1/consent/{id}`. */
  readonly whole: string;
}

/** One request as `GET /v1/consent` lists it: a {@link ConsentView}, maybe shortened. */
export interface ListedConsentView extends ConsentView {
  /** Null when the request is listed whole. */
  readonly shortened: ConsentShortened | null;
}

/** The answer of `GET /v1/consent`. */
export interface ConsentListAnswer {
  readonly requests: ListedConsentView[];
  /** The cursor of the next page (`?after=`), null after the last. */
  readonly next: string | null;
}

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? "null", "utf8");

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Every text in `value` longer than `max` by its ends (`elide`); the rest as it is. */
function elideTexts(value: unknown, max: number): unknown {
  if (typeof value === "string") return elide(value, max);
  if (Array.isArray(value)) return value.map((item) => elideTexts(item, max));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, elideTexts(v, max)]));
  return value;
}

interface Budget {
  left: number;
  full: boolean;
}

const OMIT = Symbol("omit");

/**
 * The arguments' first values, in order, while their JSON fits the budget: a long text by its ends; once a
 * value does not fit, it and every value after it are left out (what is shown is a prefix, never a sample).
 */
function fitValue(value: unknown, budget: Budget): unknown {
  if (budget.full) return OMIT;
  const container = typeof value === "object" && value !== null;
  if (!container) {
    const shown = typeof value === "string" ? elide(value, LISTED_ARGUMENT_CHARS) : value;
    const cost = bytesOf(shown) + 1;
    if (cost > budget.left) {
      budget.full = true;
      return OMIT;
    }
    budget.left -= cost;
    return shown;
  }
  if (budget.left < 3) {
    budget.full = true;
    return OMIT;
  }
  budget.left -= 3;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const shown = fitValue(item, budget);
      if (shown === OMIT) break;
      out.push(shown);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const cost = bytesOf(key) + 1;
    if (cost > budget.left) {
      budget.full = true;
      break;
    }
    budget.left -= cost;
    const shown = fitValue(item, budget);
    if (shown === OMIT) break;
    out[key] = shown;
  }
  return out;
}

/** A request's arguments as listed, and whether values were left out. */
function listedArguments(parameters: unknown): { shown: unknown; cut: boolean } {
  const budget: Budget = { left: LISTED_ARGUMENTS_BYTES, full: false };
  const shown = fitValue(parameters, budget);
  return shown === OMIT ? { shown: null, cut: true } : { shown, cut: budget.full };
}

/** A request's `request` as listed: its arguments fitted, every other long text by its ends. */
function listedRequest(request: unknown): { request: unknown; cut: boolean } {
  if (!isRecord(request) || !isRecord(request["action"]) || !("parameters" in request["action"])) {
    return { request: elideTexts(request, LISTED_TEXT_CHARS), cut: false };
  }
  const { parameters, ...action } = request["action"];
  const args = listedArguments(parameters);
  const rest = elideTexts({ ...request, action }, LISTED_TEXT_CHARS) as Record<string, unknown>;
  return { request: { ...rest, action: { ...(rest["action"] as object), parameters: args.shown } }, cut: args.cut };
}

/** A row as `GET /v1/consent` lists it: whole when it is small, else shortened and marked. */
export function listConsent(row: PendingConsentRow): ListedConsentView {
  const view = viewConsent(row);
  const fitted = listedRequest(view.request);
  const listed = {
    request: fitted.request,
    reasons: elideTexts(view.reasons, LISTED_TEXT_CHARS),
    answer: elideTexts(view.answer, LISTED_TEXT_CHARS),
  };
  const omitted = bytesOf({ request: view.request, reasons: view.reasons, answer: view.answer }) - bytesOf(listed);
  if (omitted === 0 && !fitted.cut) return { ...view, shortened: null };
  return {
    ...view,
    ...listed,
    shortened: { omitted_bytes: Math.max(0, omitted), arguments_cut: fitted.cut, whole: `/v1/consent/${view.id}` },
  };
}

/** The cursor `?after=` takes: where the next page starts, opaque to clients. */
export function encodeConsentCursor(cursor: PendingCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAtMs, cursor.id]), "utf8").toString("base64url");
}

/** The cursor of `?after=`; 400 `invalid_query` for anything a listing did not give. */
export function decodeConsentCursor(text: string): PendingCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 2 &&
    Number.isSafeInteger(parsed[0]) &&
    typeof parsed[1] === "string" &&
    parsed[1] !== "" &&
    parsed[1].length <= 1024
  ) {
    return { createdAtMs: parsed[0] as number, id: parsed[1] };
  }
  throw new HttpError(
    400,
    "invalid_query",
    "querystring/after: not a cursor of this listing (pass the `next` of the previous page as it came)",
  );
}

/** The page size of `?limit=` (checked as 1 to 9 digits): 1 to {@link MAX_CONSENT_PAGE}, default {@link DEFAULT_CONSENT_PAGE}. */
export function consentPageLimit(raw: string | undefined): number {
  const limit = raw === undefined ? DEFAULT_CONSENT_PAGE : Number(raw);
  if (limit < 1 || limit > MAX_CONSENT_PAGE) {
    throw new HttpError(400, "invalid_query", `querystring/limit: must be between 1 and ${MAX_CONSENT_PAGE}`);
  }
  return limit;
}

/**
 * The answer for a page the store read: each row listed ({@link listConsent}) until the next would take the
 * answer past `maxBytes` (the first always goes in); `next` then starts after the last one listed, else
 * after the page (null when nothing is left).
 */
export function listConsentPage(page: PendingPage, maxBytes = CONSENT_LIST_BYTES): ConsentListAnswer {
  const requests: ListedConsentView[] = [];
  let bytes = 0;
  let previous: PendingConsentRow | undefined;
  for (const row of page.rows) {
    const listed = listConsent(row);
    const size = bytesOf(listed) + 1;
    if (previous !== undefined && bytes + size > maxBytes) {
      return { requests, next: encodeConsentCursor({ createdAtMs: previous.createdAtMs, id: previous.id }) };
    }
    bytes += size;
    requests.push(listed);
    previous = row;
  }
  return { requests, next: page.more && page.last !== null ? encodeConsentCursor(page.last) : null };
}
