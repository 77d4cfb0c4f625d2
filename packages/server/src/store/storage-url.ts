/**
 * Which storage `acp serve` (and `acp console-link`) uses. Precedence: `--storage-url`, then
 * `ACP_STORAGE_URL`, then `storage.url` in config.yml; none of them: SQLite in `$ACP_HOME`. An empty
 * value counts as absent.
 */
import { PostgresStoreError, redactPostgresUrl } from "@acp/store";

/** The environment variable naming the storage URL. */
export const STORAGE_URL_ENV = "ACP_STORAGE_URL";

/** Where a storage URL came from (named in errors). */
export type StorageUrlSource = "--storage-url" | typeof STORAGE_URL_ENV | "config.yml storage.url";

/** A chosen storage URL and where it came from. */
export interface ResolvedStorageUrl {
  readonly url: string;
  readonly source: StorageUrlSource;
}

/** Picks the storage URL by precedence; null means SQLite. */
export function resolveStorageUrl(candidates: {
  readonly flag?: string | undefined;
  readonly env?: string | undefined;
  readonly config?: string | undefined;
}): ResolvedStorageUrl | null {
  if (candidates.flag !== undefined && candidates.flag !== "") return { url: candidates.flag, source: "--storage-url" };
  if (candidates.env !== undefined && candidates.env !== "") return { url: candidates.env, source: STORAGE_URL_ENV };
  if (candidates.config !== undefined && candidates.config !== "") {
    return { url: candidates.config, source: "config.yml storage.url" };
  }
  return null;
}

/** The URL safe to print (password masked), or a placeholder when it is not a URL at all. */
export function safeStorageUrl(url: string): string {
  try {
    return redactPostgresUrl(url);
  } catch {
    return "(not a postgres:// URL)";
  }
}

/**
 * One line saying why the storage could not be opened and what to do, naming the URL with its password
 * masked (never the password). Any error, not only the store's own, gives a line.
 */
export function explainStorageError(err: unknown, resolved: ResolvedStorageUrl): string {
  const shown = safeStorageUrl(resolved.url);
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof PostgresStoreError ? err.code : undefined;
  if (code === "postgres_url_invalid") {
    return `${resolved.source}: ${message}; write it as postgres://user:password@host:5432/database`;
  }
  if (code === "postgres_unavailable" && message.includes("unsupported startup parameter")) {
    // PgBouncer (and other poolers) refuse the session settings the driver sends when it connects
    return (
      `${resolved.source}: cannot connect to ${shown} (${message.replace(`${shown}: `, "")}): a connection pooler ` +
      "(PgBouncer) refuses the session settings acp sends; add `ignore_startup_parameters = statement_timeout, " +
      "idle_in_transaction_session_timeout` to its configuration and set both on the database role instead " +
      "(ALTER ROLE … SET statement_timeout = '30s'; ALTER ROLE … SET idle_in_transaction_session_timeout = '30s'): " +
      "see `acp docs guides/serve-nodes`"
    );
  }
  if (code === "postgres_unavailable") {
    return (
      `${resolved.source}: cannot reach PostgreSQL at ${shown} (${message.replace(`${shown}: `, "")}); ` +
      `check that the server runs and the host, port, user, password and database are right, ` +
      `or remove the URL to use SQLite in $ACP_HOME`
    );
  }
  if (code === "postgres_migration_failed") {
    return `${resolved.source}: cannot prepare the tables in ${shown}: ${message}; the user needs CREATE rights on the database`;
  }
  if (code === "postgres_clock_skew") return `${resolved.source}: ${shown}: ${message}`;
  if (code === "postgres_schema_newer") {
    return `${resolved.source}: cannot use ${shown}: ${message}; an upgrade is rolled out to every node (nothing was changed)`;
  }
  return `${resolved.source}: cannot open the state in ${shown}: ${message}`;
}
