import { sha256Ref } from "../canonical-json/sha256.js";
import type { AuditEventInput, AuditMetadata } from "./event.js";
import { MAX_AUDIT_LINE_LENGTH } from "./parse-event.js";

/** What an event's own fields and the rest of its line may take besides `metadata`. */
const OUTSIDE_METADATA = 64 * 1024;
/** The longest `agent`, `tool`, … string kept as it is in an oversized event. */
const MAX_FIELD = 4096;
/** Strings shorter than this are never replaced (the placeholder itself is about 110 characters). */
const MIN_REPLACED = 1024;

const FIELDS = ["request_id", "agent", "tool", "category", "risk_level", "decision", "policy_rule"] as const;

/** What stands in the audit for a string too long to keep: its length and its SHA-256 (UTF-8). */
export function omittedString(value: string): string {
  return `[omitted from the audit: ${value.length} characters, ${sha256Ref(value)}]`;
}

/** JSON text length of a value, or Infinity when it has none (the writer then refuses it as before). */
function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return Infinity;
  }
}

interface Leaf {
  readonly holder: Record<string, unknown> | unknown[];
  readonly key: string | number;
  readonly length: number;
}

/** Every string of `value` at least MIN_REPLACED long, in a deep copy of `value` it returns. */
function copyWithLongStrings(value: unknown, leaves: Leaf[]): unknown {
  if (Array.isArray(value)) {
    const copy: unknown[] = value.map((item) => copyWithLongStrings(item, leaves));
    copy.forEach((item, i) => {
      if (typeof item === "string" && item.length >= MIN_REPLACED)
        leaves.push({ holder: copy, key: i, length: item.length });
    });
    return copy;
  }
  if (typeof value === "object" && value !== null) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const inner = copyWithLongStrings(item, leaves);
      Object.defineProperty(copy, key, { value: inner, enumerable: true, writable: true, configurable: true });
      if (typeof inner === "string" && inner.length >= MIN_REPLACED)
        leaves.push({ holder: copy, key, length: inner.length });
    }
    return copy;
  }
  return value;
}

/**
 * An audit input whose line fits the verifier's {@link MAX_AUDIT_LINE_LENGTH}, for the writer to use
 * when the event as given would be longer (a tool call with megabytes of arguments): the longest strings
 * of `metadata` are replaced, longest first, by {@link omittedString} (their length and SHA-256) until it
 * fits, and so is an own field (`tool`, `agent`, …) over 4,096 characters. When that is not enough
 * (megabytes of keys or numbers), `metadata` becomes `{ audit_omitted: { characters, sha256 } }` of its
 * whole JSON. The input is redacted already, so no digest is of a secret. Everything else is kept.
 */
export function fitAuditInput(input: AuditEventInput): AuditEventInput {
  const out: { -readonly [K in keyof AuditEventInput]: AuditEventInput[K] } = { ...input };
  for (const field of FIELDS) {
    const value = input[field];
    if (typeof value === "string" && value.length > MAX_FIELD) out[field] = omittedString(value);
  }
  const metadata = input.metadata;
  if (metadata === undefined) return out;
  const budget = MAX_AUDIT_LINE_LENGTH - OUTSIDE_METADATA;
  let size = jsonLength(metadata);
  if (size <= budget || size === Infinity) return out;
  const leaves: Leaf[] = [];
  const copy = copyWithLongStrings(metadata, leaves) as Record<string, unknown>;
  leaves.sort((a, b) => b.length - a.length);
  for (const leaf of leaves) {
    if (size <= budget) break;
    const holder = leaf.holder as Record<string | number, unknown>;
    const placeholder = omittedString(holder[leaf.key] as string);
    holder[leaf.key] = placeholder;
    size -= leaf.length - placeholder.length;
  }
  const fitted = jsonLength(copy);
  if (fitted <= budget) {
    out.metadata = copy as AuditMetadata;
    return out;
  }
  const whole = JSON.stringify(metadata);
  out.metadata = { audit_omitted: { characters: whole.length, sha256: sha256Ref(whole) } };
  return out;
}
