/** The embedded stores: SQLite `state.db` for consent and console state, the JSONL file for the audit chain. */
import type { CheckpointPublicKey } from "@acp/core";
import { createPendingConsentStore, openPendingConsentDb } from "@acp/store";
import { createFileAuditTrail } from "./file-audit-trail.js";
import { createPolledChangeFeed } from "./polled-change-feed.js";
import { createSqliteConsoleAuthStore } from "./sqlite-console-auth.js";
import type { ServerStores } from "./types.js";

/** Where the embedded stores live. */
export interface SqliteStoresOptions {
  /** `$ACP_HOME/state.db`, or `:memory:`. */
  readonly statePath: string;
  /** `$ACP_HOME/audit.jsonl`. */
  readonly auditPath: string;
  readonly clock: () => Date;
  readonly auditPublicKey?: CheckpointPublicKey;
  /** How often the change feed looks at the pending table. Default 500 ms. */
  readonly pollIntervalMs?: number;
}

/** Opens the embedded stores. The caller closes them. */
export function openSqliteStores(options: SqliteStoresOptions): ServerStores {
  const db = openPendingConsentDb(options.statePath);
  const pending = createPendingConsentStore(db);
  const changes = createPolledChangeFeed(pending, {
    clock: options.clock,
    ...(options.pollIntervalMs !== undefined ? { intervalMs: options.pollIntervalMs } : {}),
  });
  const ping = db.prepare("SELECT 1 AS one");
  return {
    pending,
    consoleAuth: createSqliteConsoleAuthStore(db),
    audit: createFileAuditTrail(
      options.auditPath,
      options.auditPublicKey !== undefined ? { publicKey: options.auditPublicKey } : {},
    ),
    changes,
    ready: () => {
      try {
        return Promise.resolve(ping.get() !== undefined);
      } catch {
        return Promise.resolve(false);
      }
    },
    close: () => {
      changes.close();
      if (db.open) db.close();
      return Promise.resolve();
    },
  };
}
