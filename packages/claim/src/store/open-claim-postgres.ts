import { openPostgresStore, type OpenPostgresStoreOptions, type PostgresStore } from "@acp/store";
import { CLAIM_POSTGRES_MIGRATIONS } from "./postgres-migrations.js";

/**
 * Opens the PostgreSQL store at `url` for the claim provider: the project's pool and migration runner
 * (`acp_migrations`, one transaction under an advisory lock), with the claim tables applied after the store's
 * own. Errors are the store's (`postgres_url_invalid`, `postgres_unavailable`, `postgres_migration_failed`),
 * the password never shown.
 */
export async function openClaimPostgres(
  url: string,
  options: Omit<OpenPostgresStoreOptions, "migrations"> = {},
): Promise<PostgresStore> {
  return openPostgresStore(url, { applicationName: "acp-claim", ...options, migrations: CLAIM_POSTGRES_MIGRATIONS });
}
