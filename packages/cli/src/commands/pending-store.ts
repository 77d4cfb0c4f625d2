/**
 * Where `acp pending`, `acp approve` and `acp deny` find the pending consent requests: `$ACP_HOME/state.db`,
 * or the PostgreSQL database of `--storage-url` / ACP_STORAGE_URL / `storage.url` (the precedence of
 * `acp serve`). Both behind the one store interface the service answers through.
 */
import { join } from "node:path";
import type { Command } from "commander";
import {
  explainStorageError,
  HttpError,
  openPendingConsent,
  readServeState,
  safeStorageUrl,
  STORAGE_URL_ENV,
  type PendingConsentHandle,
} from "@acp/server/state";
import { describeOwner, isExistingHome, isOrphaned, type PendingConsentRow } from "@acp/store";

export { isOrphaned };
import { resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { storageOf } from "./storage-url.js";

/** The `--storage-url` option these commands share. */
export interface StorageFlags {
  storageUrl?: string;
}

/** Adds `--storage-url <url>` to a command. */
export function storageUrlOption(command: Command): Command {
  return command.option(
    "--storage-url <url>",
    `the PostgreSQL database of \`acp serve\` (postgres://…); default ${STORAGE_URL_ENV} or storage.url in ` +
      "config.yml, else $ACP_HOME/state.db",
  );
}

/**
 * Runs `fn` on the pending-consent store (null: there is none yet, so nothing is pending) and closes it.
 * A database that cannot be reached, or fails mid-way, is exit 1 with the URL (password masked).
 */
export async function withPendingStore<T>(
  ctx: CliContext,
  flags: StorageFlags,
  fn: (handle: PendingConsentHandle | null) => Promise<T>,
): Promise<T> {
  const home = resolveHome(ctx.io);
  const storage = storageOf(ctx, flags, home);
  if (storage === null && readServeState(home)?.storage === "postgres") {
    throw new CliError(
      `the running \`acp serve\` keeps its state in PostgreSQL: pass --storage-url or set ${STORAGE_URL_ENV}`,
      EXIT.error,
    );
  }
  const statePath = join(home, "state.db");
  let handle: PendingConsentHandle | null;
  try {
    handle = await openPendingConsent({
      statePath,
      ...(storage !== null ? { storageUrl: storage.url } : {}),
    });
  } catch (err) {
    if (storage === null) {
      throw new CliError(`cannot read \`${statePath}\`: ${messageOf(err)}`, EXIT.error);
    }
    throw new CliError(explainStorageError(err, storage), EXIT.error);
  }
  try {
    return await fn(handle);
  } catch (err) {
    if (err instanceof CliError || err instanceof HttpError) throw err;
    if (storage === null) throw new CliError(`cannot use \`${statePath}\`: ${messageOf(err)}`, EXIT.error);
    throw new CliError(explainStorageError(err, storage), EXIT.error);
  } finally {
    await handle?.close();
  }
}

/** Where these commands look, for a person: `$ACP_HOME/state.db`, or the storage URL with its password masked. */
export function pendingStoreLocation(ctx: CliContext, flags: StorageFlags): string {
  const home = resolveHome(ctx.io);
  const storage = storageOf(ctx, flags, home);
  return storage === null ? join(home, "state.db") : safeStorageUrl(storage.url);
}

/**
 * Why nothing can be pending when there is no home at all: a proxy started before `acp init` keeps no
 * requests for `acp pending` (it refuses a call that asks when it has no terminal), so the person is
 * told to make the home rather than to wait. `undefined` when the home exists or a storage URL is used.
 */
export function noHomeNote(ctx: CliContext, flags: StorageFlags): string | undefined {
  const home = resolveHome(ctx.io);
  if (isExistingHome(home) || storageOf(ctx, flags, home) !== null) return undefined;
  return `no ACP home at ${home} yet (\`acp init\` makes one; then restart acp proxy in your MCP client)`;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Why an orphaned row cannot be answered, for `acp approve` / `acp deny`. */
export function orphanedRefusal(row: PendingConsentRow): string {
  const who = row.owner === null ? "the process that asked" : `the acp proxy that asked (${describeOwner(row.owner)})`;
  return (
    `consent request \`${row.id}\` cannot be answered: ${who} is no longer running, so nobody is waiting for ` +
    "the answer (the call it held ended with it); nothing was recorded. The next acp proxy to start records it withdrawn"
  );
}

/** The line `acp pending` writes on stderr about orphaned rows it does not list. */
export function orphanedNote(rows: readonly PendingConsentRow[]): string {
  const ids = rows.map((r) => `${r.id}${r.owner !== null ? ` (${describeOwner(r.owner)})` : ""}`).join(", ");
  const one = rows.length === 1;
  return (
    `${rows.length} request${one ? "" : "s"} not listed: the acp proxy that asked ${one ? "is" : "are"} no longer ` +
    `running, so nobody waits for ${one ? "its" : "their"} answer: ${ids}. The next acp proxy to start records ` +
    `${one ? "it" : "them"} withdrawn.`
  );
}
