/**
 * `acp serve`'s PostgreSQL at start and stop: the wait for a database started with the node (compose,
 * Kubernetes), and the close that says what a failed one leaves.
 */
import { DEFAULT_POSTGRES_CONNECT_WAIT_MS, waitForPostgres } from "@acp/store";
import { safeStorageUrl, type EmbeddedServer, type ResolvedStorageUrl } from "@acp/server";
import { CliError, EXIT } from "../exit-codes.js";

/** The longest `--storage-connect-wait` / `storage.connect_wait` (seconds): an hour. */
export const MAX_STORAGE_CONNECT_WAIT_S = 3600;

/**
 * How long a node waits at start for a PostgreSQL not accepting connections yet (ms): `--storage-connect-wait`,
 * else `storage.connect_wait` (checked with config.yml), else 30 s. Exit 2 for a flag that is not a number of
 * seconds from 0 to 3600.
 */
export function storageConnectWaitMs(flag: string | undefined, config: number | undefined): number {
  if (flag === undefined) return config !== undefined ? config * 1000 : DEFAULT_POSTGRES_CONNECT_WAIT_MS;
  const seconds = flag.trim() === "" ? Number.NaN : Number(flag);
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_STORAGE_CONNECT_WAIT_S) {
    throw new CliError(
      `--storage-connect-wait: \`${flag}\` is not a number of seconds from 0 to ${MAX_STORAGE_CONNECT_WAIT_S} (0: do not wait)`,
      EXIT.usage,
    );
  }
  return seconds * 1000;
}

/** Seconds, as said: `1.5 s`, `30 s`. */
const secondsOf = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

/**
 * Waits up to `waitMs` for the database of `storage` to accept connections (refused, not resolving yet,
 * starting up), telling each retry on `log`; throws the driver's `postgres_unavailable` at once when the
 * running server refuses (a password, a missing database), or when the wait is over.
 */
export async function waitForStorage(
  storage: ResolvedStorageUrl,
  waitMs: number,
  log: (line: string) => void,
): Promise<void> {
  const shown = safeStorageUrl(storage.url);
  await waitForPostgres(storage.url, {
    waitMs,
    onRetry: (r) =>
      log(
        `storage: ${shown} is not accepting connections yet (${r.reason}): attempt ${r.attempt}, trying again in ` +
          `${secondsOf(r.delayMs)} (waited ${secondsOf(r.waitedMs)} of ${secondsOf(r.waitMs)}: --storage-connect-wait, ` +
          "storage.connect_wait)",
      ),
  });
}

/**
 * Closes the service (listener, broker, audit writer, database). When that fails — the database gone as
 * the node stops, so the chain's final checkpoint cannot be written — says so and what it leaves (exit 1),
 * rather than an internal error with the driver's words.
 */
export async function closeServe(
  embedded: EmbeddedServer,
  storage: ResolvedStorageUrl | null,
  home: string,
): Promise<void> {
  try {
    await embedded.close();
  } catch (err) {
    const where = storage !== null ? `${storage.source}: ${safeStorageUrl(storage.url)}` : `\`${home}\``;
    const message = err instanceof Error ? err.message : String(err);
    throw new CliError(
      `stopped, but closing its state failed (${where}: ${message}): the audit chain's final checkpoint may be ` +
        "missing, so the events after its last checkpoint stay unsigned until a node signs the next one " +
        "(`acp audit verify` says how many)",
      EXIT.error,
    );
  }
}
