/**
 * The state the service reads and writes, behind async interfaces with two implementations: SQLite
 * `state.db` + the JSONL audit file (the default), and PostgreSQL (`storage.url: postgres://…`, several
 * nodes on one database).
 */
import type {
  AttestationLedger,
  AuditEventV02,
  AuditVerification,
  NonceStore,
  ProposalLedger,
  RateLimiter,
} from "@acp/core";
import type { AsyncConsentGrantStore, AsyncPendingConsentStore, PendingConsentRow } from "@acp/store";
import type { AuditAppender } from "../service/audit-recorder.js";

/** A console session: who signed in, and the token every state change must carry. */
export interface ConsoleSession {
  readonly csrfToken: string;
  readonly expiresAtMs: number;
  /** The name the sign-in link carried (`acp console-link --as NAME`); absent: an unnamed session. */
  readonly approver?: string;
}

/** What a spent sign-in link gives: the name it carried, if any. */
export interface RedeemedLink {
  readonly approver?: string;
}

/** One-time sign-in links and the sessions they open. Tokens are stored hashed. */
export interface ConsoleAuthStore {
  /**
   * Creates a sign-in token valid for `ttlMs`, naming the person it signs in (`approver`, checked by the
   * caller with `checkApproverName`); only its hash is kept.
   */
  createLink(nowMs: number, ttlMs: number, approver?: string): Promise<string>;
  /** Spends a sign-in token: the link's name exactly once (on any node) for a known, unexpired token, else null. */
  redeemLink(token: string, nowMs: number): Promise<RedeemedLink | null>;
  /** Opens a session for `approver` (absent: unnamed); returns the cookie value (kept hashed) and its CSRF token. */
  createSession(
    nowMs: number,
    ttlMs: number,
    approver?: string,
  ): Promise<{ readonly id: string; readonly session: ConsoleSession }>;
  /** The session behind a cookie value, or null when unknown or expired. */
  getSession(id: string, nowMs: number): Promise<ConsoleSession | null>;
  /** Ends a session (sign-out). */
  deleteSession(id: string): Promise<void>;
}

/** What `GET /v1/audit` filters on. Every filter is an exact match except `q` (substring, case-insensitive). */
export interface AuditQuery {
  readonly limit: number;
  /** Return events older than this 1-based line (the `next` of the previous page). */
  readonly before?: number;
  readonly eventType?: string;
  readonly tool?: string;
  readonly agent?: string;
  readonly decision?: string;
  readonly requestId?: string;
  readonly q?: string;
}

/** One event with its 1-based line in the chain. */
export interface AuditEntry {
  readonly line: number;
  readonly event: AuditEventV02;
}

/** A page of events, newest first. */
export interface AuditPage {
  readonly events: readonly AuditEntry[];
  /** Events in the chain (all lines). */
  readonly total: number;
  /** Pass as `before` for the next page; null on the last page. */
  readonly next: number | null;
}

/** The audit chain as the service reads it. */
export interface AuditTrail {
  list(query: AuditQuery): Promise<AuditPage>;
  verify(): Promise<AuditVerification>;
}

/** A change in the consent requests: one was raised, or one was answered, expired or withdrawn. */
export interface ConsentChange {
  readonly kind: "pending" | "settled";
  readonly id: string;
  readonly status: string;
}

/** Tells subscribers about consent changes, whichever process made them. */
export interface ConsentChangeFeed {
  /** Calls `listener` for each change until the returned function is called. */
  subscribe(listener: (change: ConsentChange) => void): () => void;
  /** Looks for changes now (after a write through this service); on PostgreSQL every node looks. */
  poke(): void;
  close(): void;
}

/** Waits for a person's answer to one consent request, whichever node (or `acp approve`) records it. */
export interface ConsentAnswers {
  /**
   * Resolves with the row once it is no longer pending (answered, expired or withdrawn), at once when it
   * already is. Rejects when `signal` aborts or the request is not in the store.
   */
  wait(id: string, signal: AbortSignal): Promise<PendingConsentRow>;
}

/** Where the audit chain is appended; `close` writes the final checkpoint. */
export interface AuditWriter extends AuditAppender {
  /** Resolves when every append so far is durable. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Which implementation backs the stores. */
export type StorageKind = "sqlite" | "postgres";

/** Everything the service keeps state in. */
export interface ServerStores {
  readonly kind: StorageKind;
  /** Where the state lives, safe to print (`$ACP_HOME/state.db`, or the URL with its password masked). */
  readonly location: string;
  readonly pending: AsyncPendingConsentStore;
  readonly answers: ConsentAnswers;
  readonly consoleAuth: ConsoleAuthStore;
  /** Spent consent nonces: an approval is used once across every node. */
  readonly nonces: NonceStore;
  /**
   * Approvals wider than one call (`session`, a time window): every node honours them (and, on SQLite, a
   * restarted service). The broker verifies each row's signed response before it reuses it.
   */
  readonly grants: AsyncConsentGrantStore;
  /** The live pipeline's rate-limit windows (shared by every node on PostgreSQL). */
  readonly rateLimiter: RateLimiter;
  /**
   * When ACP first saw each consent-graph proposal (shared by every node on PostgreSQL, kept across restarts):
   * a cooling period counts from there.
   */
  readonly proposals: ProposalLedger;
  /**
   * The trusted-channel attestations already used, in the spent-nonce table (`createNonceAttestationLedger`):
   * an attestation is taken once by every node on the database (and, on SQLite, by a restarted service).
   */
  readonly attestations: AttestationLedger;
  readonly audit: AuditTrail;
  readonly auditLog: AuditWriter;
  readonly changes: ConsentChangeFeed;
  /**
   * PostgreSQL: the error of a connection lost while no query has answered since (the database went away:
   * a restart, a failover, the network), else null. Decisions refuse while it is set, so none is answered
   * that the chain could not record. Absent on SQLite.
   */
  readonly unavailable?: () => Error | null;
  /**
   * After a failed audit write: resolves true once appends are safe again. PostgreSQL rolls a failed batch
   * back whole and the next one re-reads the chain's head, so that is as soon as the database answers.
   * Absent (the `audit.jsonl` file): a failed write stops decisions until the service restarts.
   */
  readonly recoverAudit?: () => Promise<boolean>;
  /**
   * Ids of requests still pending that expired at or before `beforeMs` (at most `limit`): a node (or, on
   * SQLite, the service) died while its call waited, and nothing else will conclude them. On SQLite only the
   * service's rows (no owner): an `acp proxy`'s rows are settled by the next proxy once it is gone.
   */
  readonly expiredPendingIds?: (beforeMs: number, limit: number) => Promise<string[]>;
  /**
   * Ids of requests a person answered (`approved`, `denied`) that expired at or before `beforeMs` and whose
   * nonce nobody spent (at most `limit`): their waiting call died and no completion came, so the answer is in
   * no audit event. Same rows as {@link expiredPendingIds} otherwise (on SQLite the service's own).
   */
  readonly expiredAnsweredIds?: (beforeMs: number, limit: number) => Promise<string[]>;
  /**
   * Deletes a batch of spent nonces nobody can use any more (their approval ended, and they were spent, more
   * than a day ago, and no consent row carries them: `SPENT_NONCE_KEEP_MS`); resolves with how many. The
   * expiry sweep calls it; every spend also prunes a few.
   */
  readonly pruneSpentNonces?: (nowMs: number) => Promise<number>;
  /** Whether the stores answer (for `/readyz`). */
  ready(): Promise<boolean>;
  /** Closes the audit writer (final checkpoint), the feed and the database. */
  close(): Promise<void>;
}
