import type { JsonValue } from "../canonical-json/index.js";
import type { AuditEventInput, AuditMetadata } from "./event.js";

/** What replaces a redacted value. */
export const AUDIT_REDACTED = "[REDACTED]";

/**
 * Which values never reach the audit. `keys` are case-insensitive wildcard patterns over object key
 * names (`*` any run of characters, `?` one character; the whole name must match): the value under a
 * matching key is replaced whole. `values` are regular expressions searched in every string; each
 * match is replaced, the rest of the string kept.
 */
export interface RedactionRules {
  readonly keys: readonly string[];
  readonly values: readonly RegExp[];
}

/** Key-name patterns redacted by default. */
export const DEFAULT_REDACTED_KEYS: readonly string[] = [
  "*token*",
  "*password*",
  "*passwd*",
  "*secret*",
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "api_key",
  "apikey",
  "api-key",
  "x-api-key",
  "*private_key*",
  "*privatekey*",
];

/** Value patterns redacted by default: bearer tokens and common API-key shapes. */
export const DEFAULT_REDACTED_VALUES: readonly RegExp[] = [
  /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bsk-[A-Za-z0-9_-]{8,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

/** The default rules: {@link DEFAULT_REDACTED_KEYS} and {@link DEFAULT_REDACTED_VALUES}. */
export const DEFAULT_REDACTION: RedactionRules = { keys: DEFAULT_REDACTED_KEYS, values: DEFAULT_REDACTED_VALUES };

/** Redacts one JSON value; returns the value unchanged (same reference) when nothing matched. */
export type Redactor = (value: JsonValue) => JsonValue;

function keyPatternToRegExp(pattern: string): RegExp {
  const body = pattern
    .split("")
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\/-]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}$`, "is");
}

function globalCopy(re: RegExp): RegExp {
  return re.global ? re : new RegExp(re.source, `${re.flags}g`);
}

/**
 * One case-insensitive alternation of every value pattern, for a single quick test per string: it
 * matches wherever any pattern matches (ignoring case and `s`/`m` only widen), so a string it does not
 * match needs no further work. `undefined` when patterns cannot be merged (flags `u`/`v`, or group
 * references, whose numbering the alternation would shift).
 */
function unionOf(values: readonly RegExp[]): RegExp | undefined {
  const unmergeable = (re: RegExp): boolean => /[uv]/.test(re.flags) || /\\[1-9]|\\k<|\(\?<[^=!]/.test(re.source);
  if (values.length === 0 || values.some(unmergeable)) return undefined;
  const flags = `i${values.some((re) => re.flags.includes("s")) ? "s" : ""}${values.some((re) => re.flags.includes("m")) ? "m" : ""}`;
  return new RegExp(values.map((re) => `(?:${re.source})`).join("|"), flags);
}

/** Compiles rules into a {@link Redactor}. Values are walked recursively; input is never mutated. */
export function createRedactor(rules: RedactionRules = DEFAULT_REDACTION): Redactor {
  const keys = rules.keys.map(keyPatternToRegExp);
  const values = rules.values.map(globalCopy);
  const any = unionOf(rules.values);
  const keyCache = new Map<string, boolean>();
  const isSecretKey = (key: string): boolean => {
    let hit = keyCache.get(key);
    if (hit === undefined) {
      hit = keys.some((re) => re.test(key));
      if (keyCache.size < 4096) keyCache.set(key, hit);
    }
    return hit;
  };
  const redactString = (text: string): string => {
    if (values.length === 0 || (any !== undefined && !any.test(text))) return text;
    let out = text;
    for (const re of values) {
      re.lastIndex = 0;
      if (re.test(out)) out = out.replace(re, AUDIT_REDACTED);
    }
    return out;
  };
  const walk = (value: JsonValue): JsonValue => {
    if (typeof value === "string") return redactString(value);
    if (value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) {
      const list = value as readonly JsonValue[];
      const mapped: JsonValue[] = list.map(walk);
      return mapped.some((v, i) => v !== list[i]) ? mapped : list;
    }
    const record = value as { readonly [key: string]: JsonValue };
    let changed = false;
    const out: Record<string, JsonValue> = {};
    for (const key of Object.keys(record)) {
      const child = record[key] as JsonValue;
      const next = isSecretKey(key) ? AUDIT_REDACTED : walk(child);
      if (next !== child) changed = true;
      out[key] = next;
    }
    return changed ? out : value;
  };
  return walk;
}

const STRING_FIELDS = ["request_id", "agent", "tool", "category", "risk_level", "decision", "policy_rule"] as const;

/**
 * Redacts an event input before it is hashed and written: key and value rules over `metadata` (where
 * parameters go), value rules over the string fields. Returns the input unchanged when nothing matched.
 */
export function redactAuditInput(input: AuditEventInput, redact: Redactor): AuditEventInput {
  let out: AuditEventInput = input;
  if (input.metadata !== undefined) {
    const metadata = redact(input.metadata);
    if (metadata !== input.metadata) out = { ...out, metadata: metadata as AuditMetadata };
  }
  for (const field of STRING_FIELDS) {
    const value = input[field];
    if (typeof value !== "string") continue;
    const next = redact(value);
    if (next !== value) out = { ...out, [field]: next };
  }
  return out;
}
