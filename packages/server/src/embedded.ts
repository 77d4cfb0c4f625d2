/**
 * The embedded service: SQLite `state.db`, the JSONL audit chain (batched fsync, signed checkpoints)
 * and the HTTP app, opened together and closed together. `acp serve` and the tests use it.
 */
import { openAuditLog, type AuditLog } from "@acp/store";
import { createAcpServer, type AcpServer, type AcpServerOptions } from "./server.js";
import { openSqliteStores } from "./store/sqlite-stores.js";
import type { ServerStores } from "./store/types.js";

/** Where the embedded state lives, and the service's parts. */
export interface EmbeddedServerOptions extends Omit<AcpServerOptions, "stores" | "audit"> {
  /** `$ACP_HOME/state.db` (or `:memory:`). */
  readonly statePath: string;
  /** `$ACP_HOME/audit.jsonl`. */
  readonly auditPath: string;
  /** How often the consent change feed looks at the pending table. Default 500 ms. */
  readonly changePollMs?: number;
}

/** The opened service. */
export interface EmbeddedServer {
  readonly server: AcpServer;
  readonly stores: ServerStores;
  readonly auditLog: AuditLog;
  /** Closes the listener, the broker, the audit log and the database, in that order. */
  close(): Promise<void>;
}

/** Opens the stores and the audit log, and builds the service on them. */
export async function openEmbeddedServer(options: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const stores = openSqliteStores({
    statePath: options.statePath,
    auditPath: options.auditPath,
    clock: options.clock,
    auditPublicKey: options.keys.publicKey,
    ...(options.changePollMs !== undefined ? { pollIntervalMs: options.changePollMs } : {}),
  });
  let auditLog: AuditLog;
  try {
    auditLog = await openAuditLog(options.auditPath, {
      clock: options.clock,
      signer: options.keys.privateKey,
      fsync: "batch",
    });
  } catch (err) {
    await stores.close();
    throw err;
  }
  const server = await createAcpServer({ ...options, stores, audit: auditLog });
  return {
    server,
    stores,
    auditLog,
    async close() {
      await server.close();
      await auditLog.close();
      await stores.close();
    },
  };
}
