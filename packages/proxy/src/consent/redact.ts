import {
  createRedactor,
  DEFAULT_REDACTION,
  restoreRedacted as restoreWith,
  type RedactionRules,
  type Redactor,
} from "@acp/core";

/** What every channel shows instead of a secret value (kept lowercase: `acp approve --modify` reads it back). */
export const REDACTED = "[redacted]";

/**
 * The core redactor with the consent channels' placeholder: what a person is shown. `secrets` names the
 * vault values in use, so a call that carries one is never displayed with it.
 */
export function createConsentRedactor(
  rules: RedactionRules = DEFAULT_REDACTION,
  secrets?: () => readonly string[],
): Redactor {
  return createRedactor(rules, { placeholder: REDACTED, ...(secrets !== undefined ? { secrets } : {}) });
}

const DEFAULT_CONSENT_REDACTOR = createConsentRedactor();

/**
 * Puts secrets back into arguments a person edited: wherever the edit still reads what was shown for the
 * original (`[redacted]`, or a string with redacted parts), the original value is used. `redact` must be
 * the redactor the request was shown with (default: the default rules).
 */
export function restoreRedacted(
  original: unknown,
  edited: unknown,
  redact: Redactor = DEFAULT_CONSENT_REDACTOR,
): unknown {
  return restoreWith(original, edited, redact, REDACTED);
}
