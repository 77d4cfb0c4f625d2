/**
 * The state the service reads and writes, behind interfaces: SQLite and the JSONL audit file today,
 * PostgreSQL later (one implementation per interface, one shared test suite).
 */
import type { AuditEventV02, AuditVerification } from "@acp/core";
import type { PendingConsentStore } from "@acp/store";

/** A console session: who signed in, and the token every state change must carry. */
export interface ConsoleSession {
  readonly csrfToken: string;
  readonly expiresAtMs: number;
}

/** One-time sign-in links and the sessions they open. Tokens are stored hashed. */
export interface ConsoleAuthStore {
  /** Creates a sign-in token valid for `ttlMs`; only its hash is kept. */
  createLink(nowMs: number, ttlMs: number): string;
  /** Spends a sign-in token: true exactly once for a known, unexpired token. */
  redeemLink(token: string, nowMs: number): boolean;
  /** Opens a session; returns the cookie value (kept hashed) and its CSRF token. */
  createSession(nowMs: number, ttlMs: number): { readonly id: string; readonly session: ConsoleSession };
  /** The session behind a cookie value, or null when unknown or expired. */
  getSession(id: string, nowMs: number): ConsoleSession | null;
  /** Ends a session (sign-out). */
  deleteSession(id: string): void;
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
  /** Looks for changes now (after a write through this service). */
  poke(): void;
  close(): void;
}

/** Everything the service keeps state in. */
export interface ServerStores {
  readonly pending: PendingConsentStore;
  readonly consoleAuth: ConsoleAuthStore;
  readonly audit: AuditTrail;
  readonly changes: ConsentChangeFeed;
  /** Whether the stores answer (for `/readyz`). */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}
