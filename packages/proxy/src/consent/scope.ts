import { MAX_WINDOW_APPROVAL_MS, parseIsoTime } from "@acp/core";
import type { ApprovalScope } from "./types.js";

const DURATION = /^([1-9][0-9]{0,5})(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The longest time window a person can approve for (7 days: longer does not verify, `proof_scope_too_long`). */
export const MAX_APPROVAL_WINDOW_MS = MAX_WINDOW_APPROVAL_MS;

/** Parses `90s`, `10m`, `2h`, `1d` into milliseconds; null when malformed or longer than seven days. */
export function parseApprovalDuration(text: string): number | null {
  const match = DURATION.exec(text.trim());
  if (match === null) return null;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms > MAX_APPROVAL_WINDOW_MS ? null : ms;
}

/**
 * Whether a value is a well-formed approval scope (`once`, `session`, or `{ until }` with an RFC 3339 time
 * that names its zone, `Z` or an offset): a time without one would be read as the reader's local time.
 */
export function isApprovalScope(value: unknown): value is ApprovalScope {
  if (value === "once" || value === "session") return true;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  const until = (value as { until?: unknown }).until;
  return keys.length === 1 && parseIsoTime(until) !== undefined;
}

/** A short human label: `once`, `session`, `until 2026-01-15T12:10:00.000Z`. */
export function describeScope(scope: ApprovalScope): string {
  return typeof scope === "string" ? scope : `until ${scope.until}`;
}
