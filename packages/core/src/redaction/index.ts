/** The one redactor: what the audit, consent channels, results, errors and logs never show. */
export {
  DEFAULT_REDACTED_KEYS,
  DEFAULT_REDACTED_VALUES,
  DEFAULT_REDACTION,
  NO_PATTERNS,
  REDACTED,
  extendRedaction,
  type RedactionRules,
} from "./rules.js";
export { createRedactor, redactSecrets, type Redactor, type RedactorOptions } from "./redactor.js";
export { restoreRedacted } from "./restore.js";
export { lineEndings, spellSecrets, type SecretSpellings } from "./secret-variants.js";
export {
  acrossPieces,
  joinedPiecesRedactor,
  merged,
  occurrences,
  rawSecrets,
  replacedPieces,
  type JoinedPiecesRedactor,
} from "./joined-pieces.js";
export { parseRedactionConfig } from "./config.js";
