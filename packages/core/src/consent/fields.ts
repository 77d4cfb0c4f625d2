import { tryCanonicalJson } from "../canonical-json/index.js";
import type { Issue } from "../issues/index.js";

/** Where a field sits in a message. */
export type FieldPath = readonly (string | number)[];

/** Collects issues while a message is checked field by field. */
export class FieldChecker {
  readonly issues: Issue[] = [];
  private readonly code: string;
  /** `issueCode.code` is the code every issue gets. */
  constructor(issueCode: { readonly code: string }) {
    this.code = issueCode.code;
  }

  /** Records an issue at a path. */
  add(path: FieldPath, message: string): void {
    this.issues.push({
      code: this.code,
      path,
      message: `${path.length > 0 ? `\`${path.join(".")}\`: ` : ""}${message}`,
    });
  }

  /** Checks a value is a plain object with exactly these keys; returns it as a record when it is. */
  object(
    value: unknown,
    path: FieldPath,
    keys: readonly string[],
    optional: readonly string[] = [],
  ): Record<string, unknown> | undefined {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      this.add(path, "expected an object");
      return undefined;
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!keys.includes(key) && !optional.includes(key)) this.add([...path, key], "unknown field");
    }
    for (const key of keys) if (!Object.hasOwn(record, key)) this.add([...path, key], "missing field");
    return record;
  }

  /** Checks a non-empty string of at most `max` characters, with no lone surrogate. */
  string(value: unknown, path: FieldPath, max = 4096): value is string {
    if (typeof value !== "string") this.add(path, "expected a string");
    else if (value.length === 0) this.add(path, "must not be empty");
    else if (value.length > max) this.add(path, `longer than ${max} characters`);
    else return this.wellFormed(value, path);
    return false;
  }

  /** Checks a string holds no lone surrogate: it could not be put in canonical JSON, so not signed or hashed. */
  wellFormed(value: string, path: FieldPath): boolean {
    if (!LONE_SURROGATE.test(value)) return true;
    this.add(path, "holds a lone surrogate (not valid I-JSON)");
    return false;
  }

  /** Checks a string matching a pattern; `what` names the expected shape. */
  pattern(value: unknown, path: FieldPath, re: RegExp, what: string): void {
    if (typeof value !== "string" || !re.test(value)) this.add(path, `expected ${what}`);
  }

  /** Checks one of a fixed list of strings. */
  oneOf(value: unknown, path: FieldPath, allowed: readonly string[]): void {
    if (typeof value !== "string" || !allowed.includes(value)) this.add(path, `expected one of ${allowed.join(", ")}`);
  }

  /** Checks an RFC 3339 time with a zone (`2026-01-15T12:00:00Z`). */
  time(value: unknown, path: FieldPath): void {
    if (parseIsoTime(value) === undefined) this.add(path, "expected an ISO-8601 time with a zone");
  }

  /** Checks a plain JSON object (parameters, modifications). */
  jsonObject(value: unknown, path: FieldPath): void {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      this.add(path, "expected an object");
      return;
    }
    const r = tryCanonicalJson(value);
    if (!r.ok) this.add(path, r.issues[0]?.message ?? "not plain JSON");
  }
}

/** A UTF-16 surrogate not part of a pair (with the `u` flag a pair is one code point, not `Cs`). */
const LONE_SURROGATE = /\p{Cs}/u;

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/;

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Milliseconds since the epoch of an RFC 3339 time with a zone, or undefined when it is not one. A date or
 * time that does not exist (30 February, 24:00, an offset of +24:00) is refused: `Date.parse` would roll it
 * over to another instant, which another reader of the same signed string may not.
 */
export function parseIsoTime(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const m = ISO_TIME.exec(value);
  if (m === null) return undefined;
  const part = (i: number): number => Number(m[i] ?? 0);
  const [year, month, day] = [part(1), part(2), part(3)];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (part(4) > 23 || part(5) > 59 || part(6) > 59 || part(8) > 23 || part(9) > 59) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** `cr_` followed by 1–128 letters, digits, `_` or `-`. */
export const REQUEST_ID_PATTERN = /^cr_[A-Za-z0-9_-]{1,128}$/;
/** `n_` followed by a lowercase UUID. */
export const NONCE_PATTERN = /^n_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** 64 lowercase hex digits: a raw Ed25519 public key. */
export const PUBLIC_KEY_PATTERN = /^[0-9a-f]{64}$/;
/** 128 lowercase hex digits: a raw Ed25519 signature. */
export const SIGNATURE_PATTERN = /^[0-9a-f]{128}$/;
/** `sha256:` + 64 lowercase hex digits. */
export const SHA256_REF_PATTERN = /^sha256:[0-9a-f]{64}$/;
