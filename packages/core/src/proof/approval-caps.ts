/**
 * How long a reusable approval may last (§9.5: approvals are time limited), counted from when the person
 * answered (`timestamp`) to `conditions.valid_until`. Every ACP signer keeps within these; a verifier
 * refuses a proof signed to last longer, so a signer that was misconfigured or a key used elsewhere cannot
 * hand out an approval that outlives them.
 */
import type { ConsentResponseV02 } from "../consent/index.js";
import { parseIsoTime } from "../consent/fields.js";

/** The longest a `session` approval lasts: 12 hours. */
export const MAX_SESSION_APPROVAL_MS = 12 * 3_600_000;

/** The longest a `window` approval (`--for 10m`) lasts: 7 days. */
export const MAX_WINDOW_APPROVAL_MS = 7 * 86_400_000;

/** Why `response`'s scope outlasts its cap, or null when it does not (or is single use). */
export function scopeLengthProblem(response: ConsentResponseV02): string | null {
  const { scope, valid_until: validUntil } = response.conditions;
  if (scope !== "session" && scope !== "window") return null;
  const from = parseIsoTime(response.timestamp);
  const until = parseIsoTime(validUntil);
  // the strict parse already refused times that are not RFC 3339; fail closed all the same
  if (from === undefined || until === undefined) return `\`valid_until\` or \`timestamp\` is not a time`;
  const [cap, limit] = scope === "session" ? [MAX_SESSION_APPROVAL_MS, "12 hours"] : [MAX_WINDOW_APPROVAL_MS, "7 days"];
  if (until - from <= cap) return null;
  const what = scope === "session" ? "a session approval" : "a window";
  return `${what} lasts at most ${limit}: \`valid_until\` ${validUntil} is more than ${limit} after the answer (\`timestamp\` ${response.timestamp})`;
}
