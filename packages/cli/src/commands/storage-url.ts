/** Where `acp serve` and the commands that read its state keep it: SQLite in the home, or PostgreSQL by URL. */
import { redactPostgresUrl } from "@acp/store";
import { explainStorageError, resolveStorageUrl, STORAGE_URL_ENV, type ResolvedStorageUrl } from "@acp/server/state";
import { configValue } from "../wiring/serve-start-secrets.js";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/**
 * The storage URL by precedence (flag, environment, config.yml); null: SQLite in $ACP_HOME. A `--storage-url`
 * that is not a postgres:// URL is a usage error (exit 2, before anything is opened), said as the store says
 * it (never the password); one from ACP_STORAGE_URL or config.yml fails where it is used, as before (exit 1).
 */
export function storageOf(ctx: CliContext, flags: { storageUrl?: string }, home: string): ResolvedStorageUrl | null {
  const resolved = resolveStorageUrl({
    flag: flags.storageUrl,
    env: ctx.io.env[STORAGE_URL_ENV],
    config: configValue(home, "storage.url"),
  });
  if (resolved?.source === "--storage-url") {
    try {
      redactPostgresUrl(resolved.url);
    } catch (err) {
      throw new CliError(explainStorageError(err, resolved), EXIT.usage);
    }
  }
  return resolved;
}
