/** The stable codes of {@link PostgresStoreError}; listed in docs/reference/errors.md ("PostgreSQL store"). */
export const POSTGRES_STORE_ERROR_CODES = [
  "postgres_url_invalid",
  "postgres_unavailable",
  "postgres_migration_failed",
  "postgres_schema_newer",
  "postgres_store_closed",
  "postgres_input_invalid",
  "postgres_consent_duplicate",
  "postgres_consent_unknown",
  "postgres_clock_skew",
] as const;

/** One of {@link POSTGRES_STORE_ERROR_CODES}. */
export type PostgresStoreErrorCode = (typeof POSTGRES_STORE_ERROR_CODES)[number];

/** Thrown (or rejected with) by the PostgreSQL store; a decision that meets one must refuse. */
export class PostgresStoreError extends Error {
  readonly code: PostgresStoreErrorCode;
  constructor(code: PostgresStoreErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    this.name = "PostgresStoreError";
    this.code = code;
  }
}

/** The message of any thrown value, for chaining into ours. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Refuses a string PostgreSQL cannot store in `text` (a NUL character) or that is empty, with a clear
 * error instead of a driver error; `what` names the field.
 */
export function assertStorableText(value: unknown, what: string): asserts value is string {
  if (typeof value !== "string" || value.length === 0) {
    throw new PostgresStoreError("postgres_input_invalid", `${what} must be a non-empty string`);
  }
  if (value.includes("\u0000")) {
    throw new PostgresStoreError(
      "postgres_input_invalid",
      `${what} holds a NUL character, which postgres cannot store`,
    );
  }
}
