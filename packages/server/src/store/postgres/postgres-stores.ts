/**
 * The stores on PostgreSQL (`storage.url: postgres://…`), shared by every node on the database:
 * pending consent (answers reach the waiting node through LISTEN/NOTIFY), spent nonces, rate-limit
 * windows, console links and sessions, and one audit chain appended under one serialised transaction.
 */
import type { CheckpointPublicKey, CheckpointSigner, RedactionRules } from "@acp/core";
import {
  createPostgresAuditLog,
  createPostgresConsentGrantStore,
  createPostgresNonceStore,
  createPostgresPendingConsentStore,
  createPostgresRateLimiter,
  openConsentWaiter,
  openPostgresStore,
  type PostgresStore,
} from "@acp/store";
import type { ServerStores } from "../types.js";
import { createPostgresAuditTrail } from "./audit-trail.js";
import { createPostgresConsoleAuthStore } from "./console-auth.js";
import { SERVER_POSTGRES_MIGRATIONS } from "./migrations.js";
import { openNotifiedChangeFeed } from "./notified-change-feed.js";

/** What {@link openPostgresStores} needs. */
export interface PostgresStoresOptions {
  /** `postgres://user:password@host:port/database`. */
  readonly url: string;
  readonly clock: () => Date;
  readonly auditSigner?: CheckpointSigner;
  readonly auditPublicKey?: CheckpointPublicKey;
  /** Most pooled connections of this node (default 10). */
  readonly maxConnections?: number;
  /** Give up connecting after this long (default 5000 ms). */
  readonly connectTimeoutMs?: number;
  /** Told about lost connections (they are re-established). */
  readonly onError?: (err: Error) => void;
  /** Patterns redacted from every audit event before hashing (config.yml `redaction:`); default the built-in rules. */
  readonly redaction?: RedactionRules;
  /** Known secret values (the vault's), redacted from every audit event wherever they appear; read on every append. */
  readonly secrets?: () => readonly string[];
}

async function openParts(store: PostgresStore, options: PostgresStoresOptions): Promise<ServerStores> {
  const report = (err: Error): void => options.onError?.(err);
  const waiter = await openConsentWaiter(store, { onError: report });
  const changes = await openNotifiedChangeFeed(store, { clock: options.clock, onError: report }).catch(
    async (err: unknown) => {
      await waiter.close();
      throw err;
    },
  );
  const auditLog = createPostgresAuditLog(store, {
    clock: options.clock,
    optimistic: true, // one INSERT per batch while this node wrote the head last; the locked way otherwise
    ...(options.auditSigner !== undefined ? { signer: options.auditSigner } : {}),
    ...(options.redaction !== undefined ? { redaction: options.redaction } : {}),
    ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
  });
  const clockMs = (): number => options.clock().getTime();
  return {
    kind: "postgres",
    location: store.url,
    pending: createPostgresPendingConsentStore(store),
    answers: { wait: (id, signal) => waiter.wait(id, { signal }) },
    consoleAuth: createPostgresConsoleAuthStore(store),
    grants: createPostgresConsentGrantStore(store),
    nonces: createPostgresNonceStore(store, { now: clockMs }),
    rateLimiter: createPostgresRateLimiter(store),
    audit: createPostgresAuditTrail(
      store,
      options.auditPublicKey !== undefined ? { publicKey: options.auditPublicKey } : {},
    ),
    auditLog,
    changes,
    ready: async () => {
      try {
        return (await store.query("SELECT 1 AS one")).rowCount === 1;
      } catch {
        return false;
      }
    },
    close: async () => {
      changes.close();
      try {
        await auditLog.close();
      } finally {
        await waiter.close();
        await store.close();
      }
    },
  };
}

/**
 * Connects (a `postgres_url_invalid` / `postgres_unavailable` / `postgres_migration_failed`
 * {@link PostgresStoreError} when it cannot, its message naming the URL with the password masked),
 * applies the store's and the service's migrations, and opens the `LISTEN` connections.
 */
export async function openPostgresStores(options: PostgresStoresOptions): Promise<ServerStores> {
  const store = await openPostgresStore(options.url, {
    migrations: SERVER_POSTGRES_MIGRATIONS,
    applicationName: "acp serve",
    ...(options.maxConnections !== undefined ? { max: options.maxConnections } : {}),
    ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
    ...(options.onError !== undefined ? { onConnectionError: options.onError } : {}),
  });
  try {
    return await openParts(store, options);
  } catch (err) {
    await store.close();
    throw err;
  }
}
