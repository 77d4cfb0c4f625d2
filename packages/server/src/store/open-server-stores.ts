/** Opens the stores `acp serve` runs on: PostgreSQL when a storage URL is given, SQLite otherwise. */
import { dirname } from "node:path";
import type { RedactionRules } from "@acp/core";
import type { ServiceKeyPair } from "../service/consent-proofs.js";
import { openPostgresStores } from "./postgres/postgres-stores.js";
import { openSqliteStores } from "./sqlite-stores.js";
import type { ServerStores } from "./types.js";

/** What {@link openServerStores} needs. */
export interface ServerStoresOptions {
  /** `postgres://…`; absent: the embedded SQLite stores. */
  readonly storageUrl?: string;
  /** PostgreSQL: `PostgresStoresOptions.acceptMovedDatabase` (`acp serve --accept-moved-database`). */
  readonly acceptMovedDatabase?: boolean;
  readonly statePath: string;
  readonly auditPath: string;
  readonly clock: () => Date;
  /** Audit checkpoints are signed with the private key and checked with the public one. */
  readonly keys: Pick<ServiceKeyPair, "privateKey" | "publicKey" | "ephemeral">;
  readonly changePollMs?: number;
  /** PostgreSQL: how long a new consent request waits for its turn at the limit (default 5000 ms; then 429). */
  readonly pendingLockTimeoutMs?: number;
  readonly answerPollMs?: number;
  readonly onError?: (err: Error) => void;
  /**
   * PostgreSQL: one line when the database becomes unreachable, one when it answers again, and one at open
   * when the home had no anchor for a chain that held rows (verified and anchored). SQLite: one line when the
   * audit log was found with signed checkpoints and no anchor and anchored again.
   */
  readonly log?: (line: string) => void;
  /** Patterns redacted from every audit event before hashing (config.yml `redaction:`); default the built-in rules. */
  readonly redaction?: RedactionRules;
  /** Known secret values (the vault's), redacted from every audit event wherever they appear; read on every append. */
  readonly secrets?: () => readonly string[];
}

function redactionOf(options: ServerStoresOptions): Pick<ServerStoresOptions, "redaction" | "secrets"> {
  return {
    ...(options.redaction !== undefined ? { redaction: options.redaction } : {}),
    ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
  };
}

/** Opens the stores; the caller closes them. */
export async function openServerStores(options: ServerStoresOptions): Promise<ServerStores> {
  if (options.storageUrl !== undefined) {
    return openPostgresStores({
      url: options.storageUrl,
      clock: options.clock,
      auditSigner: options.keys.privateKey,
      auditPublicKey: options.keys.publicKey,
      home: dirname(options.auditPath), // the node's anchor on the shared chain lives in its home
      ...(options.acceptMovedDatabase === true ? { acceptMovedDatabase: true } : {}),
      ...(options.onError !== undefined ? { onError: options.onError } : {}),
      ...(options.log !== undefined ? { log: options.log } : {}),
      ...(options.pendingLockTimeoutMs !== undefined ? { pendingLockTimeoutMs: options.pendingLockTimeoutMs } : {}),
      ...redactionOf(options),
    });
  }
  return openSqliteStores({
    statePath: options.statePath,
    auditPath: options.auditPath,
    clock: options.clock,
    auditSigner: options.keys.privateKey,
    auditPublicKey: options.keys.publicKey,
    // a key of this process only: the anchor an earlier process signed cannot verify with it
    ...(options.keys.ephemeral === true ? { auditEphemeralKey: true } : {}),
    ...(options.changePollMs !== undefined ? { pollIntervalMs: options.changePollMs } : {}),
    ...(options.answerPollMs !== undefined ? { answerPollMs: options.answerPollMs } : {}),
    ...(options.log !== undefined ? { log: options.log } : {}),
    ...redactionOf(options),
  });
}
