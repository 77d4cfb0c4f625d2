import { redactPostgresUrl } from "./open-postgres-store.js";
import { messageOf, PostgresStoreError } from "./postgres-store-error.js";

/** The default of {@link WaitForPostgresOptions.waitMs}: how long `acp serve` waits for a database starting with it. */
export const DEFAULT_POSTGRES_CONNECT_WAIT_MS = 30_000;

/** The first pause between attempts (ms); each later one doubles, up to {@link MAX_RETRY_DELAY_MS}. */
const FIRST_RETRY_DELAY_MS = 500;
const MAX_RETRY_DELAY_MS = 5000;

/** A retry about to happen, as {@link WaitForPostgresOptions.onRetry} is told. */
export interface PostgresConnectRetry {
  /** The attempt that failed (1 for the first). */
  readonly attempt: number;
  /** Why: the driver's words, the password never in them. */
  readonly reason: string;
  /** The pause before the next attempt (ms). */
  readonly delayMs: number;
  /** Waited so far (ms) and the most in all. */
  readonly waitedMs: number;
  readonly waitMs: number;
}

/** Options of {@link waitForPostgres}. */
export interface WaitForPostgresOptions {
  /** The longest wait in all (ms) for a database not accepting connections yet; 0: one attempt. */
  readonly waitMs: number;
  /** Each attempt gives up connecting after this long (ms, default 5000, as {@link openPostgresStore}). */
  readonly connectTimeoutMs?: number;
  /** Told before each pause (the caller logs it). */
  readonly onRetry?: (retry: PostgresConnectRetry) => void;
  /** Seams for tests: a clock (ms) and the pause. */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Errors of the socket that mean nothing listens there yet (or the name does not resolve yet). */
const NOT_LISTENING = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ENOTFOUND", // a compose service's name resolves once its container runs
  "ENOENT", // a unix socket not created yet
  "EPIPE",
]);

/**
 * SQLSTATEs of a server that is there and not accepting connections yet: starting up, shutting down or in
 * recovery (57P03 cannot_connect_now), or stopped under the connection (57P01, 57P02).
 */
const STARTING = new Set(["57P03", "57P01", "57P02"]);

/** The driver's words for a connection the server closed or that timed out before it answered. */
const DROPPED = /^(Connection terminated|timeout expired)/;

/**
 * Whether a failed connection is worth another attempt: nothing listens yet, the name does not resolve yet,
 * or the server says it is starting. A refusal by a server that runs (a wrong password or user, a missing
 * database, TLS refused) is not: waiting does not change it.
 */
export function isPostgresStarting(err: unknown): boolean {
  if (err instanceof AggregateError && err.errors.length > 0) return err.errors.every(isPostgresStarting);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && (NOT_LISTENING.has(code) || STARTING.has(code))) return true;
  return err instanceof Error && typeof code !== "string" && DROPPED.test(err.message);
}

/** What a refusal that is not retried means, said after the driver's words. */
function refusedHint(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "28P01" || code === "28000") return " (not retried: the user or password is refused)";
  if (code === "3D000") return " (not retried: the database does not exist; create it, or fix its name)";
  return " (not retried: the server answered; waiting does not change this)";
}

/** The driver's words; an AggregateError (each address of a name refused) says each one's. */
function reasonOf(err: unknown): string {
  if (err instanceof AggregateError && err.message === "" && err.errors.length > 0)
    return err.errors.map((e) => messageOf(e)).join("; ");
  return messageOf(err);
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Connects to `url` once, and again with a growing pause (0.5 s, doubling, at most 5 s) while the database
 * is not accepting connections yet ({@link isPostgresStarting}) until `waitMs` has passed in all; resolves
 * once a connection answers `SELECT 1` (and closes it). Rejects with `postgres_unavailable` (the URL's
 * password masked) at once for any other failure, or when the wait is over. For nodes started together with
 * their database (compose, Kubernetes): {@link openPostgresStore} itself does not wait.
 */
export async function waitForPostgres(url: string, options: WaitForPostgresOptions): Promise<void> {
  const safeUrl = redactPostgresUrl(url);
  const { default: driver } = await import("pg");
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const waitMs = Math.max(0, Math.floor(options.waitMs));
  const start = now();
  let delay = FIRST_RETRY_DELAY_MS;
  for (let attempt = 1; ; attempt++) {
    const client = new driver.Client({
      connectionString: url,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      application_name: "acp (waiting for the database)",
    });
    client.on("error", () => undefined); // a connection dropped while closing is no news
    try {
      await client.connect();
      await client.query("SELECT 1");
      await client.end().catch(() => undefined);
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      const reason = reasonOf(err);
      if (!isPostgresStarting(err)) {
        throw new PostgresStoreError(
          "postgres_unavailable",
          `${safeUrl}: cannot connect: ${reason}${refusedHint(err)}`,
          {
            cause: err,
          },
        );
      }
      const waited = now() - start;
      const left = waitMs - waited;
      if (left <= 0) {
        const after =
          waitMs === 0
            ? ""
            : ` (not accepting connections after ${attempt} attempts in ${Math.round(waited / 1000)} s)`;
        throw new PostgresStoreError("postgres_unavailable", `${safeUrl}: cannot connect: ${reason}${after}`, {
          cause: err,
        });
      }
      const pause = Math.min(delay, left);
      options.onRetry?.({ attempt, reason, delayMs: pause, waitedMs: waited, waitMs });
      await sleep(pause);
      delay = Math.min(delay * 2, MAX_RETRY_DELAY_MS);
    }
  }
}
