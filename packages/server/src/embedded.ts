/**
 * The service with its state, opened together and closed together: SQLite `state.db` + the JSONL audit
 * chain by default, or PostgreSQL when a storage URL is given. `acp serve` and the tests use it.
 */
import type { AttestationLedger, Pipeline, ProposalLedger, RateLimiter } from "@acp/core";
import { createAcpServer, type AcpServer, type AcpServerOptions } from "./server.js";
import { checkServerOptions } from "./server-options.js";
import { openServerStores } from "./store/open-server-stores.js";
import type { ServerStores } from "./store/types.js";

/**
 * A pipeline built on the stores' rate limiter, proposal ledger (when cooling periods count from the store) and
 * attestation ledger (a trusted-channel attestation is taken once by every node on the store).
 */
export type StoresPipeline = (
  rateLimiter: RateLimiter,
  proposals?: ProposalLedger,
  attestations?: AttestationLedger,
) => Pipeline;

/** Where the state lives, and the service's parts. */
export interface EmbeddedServerOptions extends Omit<
  AcpServerOptions,
  "stores" | "audit" | "pipeline" | "anyServerPipeline"
> {
  /**
   * The live pipeline, or a function building it on the stores' (shared) rate limiter, consent-graph
   * proposal ledger and trusted-channel attestation ledger.
   */
  readonly pipeline: Pipeline | StoresPipeline;
  /**
   * `AcpServerOptions.anyServerPipeline` (required: a caller whose `server` is only its word is judged on
   * it, ADR 0006), or a function building it on the same rate limiter and ledgers.
   */
  readonly anyServerPipeline: Pipeline | StoresPipeline;
  /** `$ACP_HOME/state.db` (or `:memory:`); used without `storageUrl`. */
  readonly statePath: string;
  /** `$ACP_HOME/audit.jsonl`; used without `storageUrl`. */
  readonly auditPath: string;
  /** `postgres://…`: every store on PostgreSQL (several nodes may share it). */
  readonly storageUrl?: string;
  /** With `storageUrl`: the database behind it was moved on purpose (`acp serve --accept-moved-database`). */
  readonly acceptMovedDatabase?: boolean;
  /** How often the consent change feed looks at the pending table (SQLite). Default 500 ms. */
  readonly changePollMs?: number;
  /**
   * How often a waiting call reads its row for an answer another process wrote (SQLite: `acp approve`).
   * Default 500 ms; answers recorded by this process wake the waiter at once.
   */
  readonly answerPollMs?: number;
  /**
   * PostgreSQL: how long a new consent request waits for its turn to be counted against the limit (default
   * 5000 ms); past it the call is refused 429 `consent_queue_full`.
   */
  readonly pendingLockTimeoutMs?: number;
  /** Told about lost PostgreSQL connections (they are re-established). */
  readonly onStoreError?: (err: Error) => void;
}

/** The opened service. */
export interface EmbeddedServer {
  readonly server: AcpServer;
  readonly stores: ServerStores;
  /** Closes the listener, the broker, the audit writer and the database, in that order. */
  close(): Promise<void>;
}

/**
 * Checks the inputs, then opens the stores and builds the service on them: a bad token set, public URL or
 * agents' servers is told as that, with no store opened and no file created.
 */
export async function openEmbeddedServer(options: EmbeddedServerOptions): Promise<EmbeddedServer> {
  checkServerOptions(options);
  const stores = await openServerStores({
    statePath: options.statePath,
    auditPath: options.auditPath,
    clock: options.clock,
    keys: options.keys,
    ...(options.storageUrl !== undefined ? { storageUrl: options.storageUrl } : {}),
    ...(options.acceptMovedDatabase === true ? { acceptMovedDatabase: true } : {}),
    ...(options.changePollMs !== undefined ? { changePollMs: options.changePollMs } : {}),
    ...(options.answerPollMs !== undefined ? { answerPollMs: options.answerPollMs } : {}),
    ...(options.onStoreError !== undefined ? { onError: options.onStoreError } : {}),
    ...(options.pendingLockTimeoutMs !== undefined ? { pendingLockTimeoutMs: options.pendingLockTimeoutMs } : {}),
    ...(options.log !== undefined ? { log: options.log } : {}),
    ...(options.redaction !== undefined ? { redaction: options.redaction } : {}),
    ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
  });
  let server: AcpServer;
  try {
    const build = (p: Pipeline | StoresPipeline): Pipeline =>
      typeof p === "function" ? p(stores.rateLimiter, stores.proposals, stores.attestations) : p;
    const pipeline = build(options.pipeline);
    const { anyServerPipeline: anyServer, ...rest } = options;
    // undefined from a JavaScript caller: createAcpServer says it is required
    const anyServerPipeline = anyServer === undefined ? anyServer : build(anyServer);
    server = await createAcpServer({ ...rest, pipeline, anyServerPipeline, stores });
  } catch (err) {
    await stores.close();
    throw err;
  }
  return {
    server,
    stores,
    async close() {
      try {
        await server.close();
      } finally {
        await stores.close();
      }
    },
  };
}
