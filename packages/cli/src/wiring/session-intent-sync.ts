/**
 * The proxy's side of `acp intent set`: it records its live sessions in the home's `state.db`, and before each
 * call of a session it reads that session's update counter (one indexed read). When a person queued a signed
 * update, it is verified with the home's public key and applied through the core's intent-update path; the
 * old version's authority tokens are revoked there. Every outcome is settled in `state.db` and audited.
 */
import { isFinalSessionState, type Session } from "@acp/core";
import type { IntentUpdateRow, LiveSessionStore } from "@acp/store";
import { verifyIntentUpdate, type VerifiedIntentUpdate } from "./intent-update.js";

/** Records audit events (the proxy's hash-chained log). */
export type IntentAudit = (
  eventType: "intent_updated" | "intent_update_refused",
  fields: Record<string, unknown>,
) => unknown;

/** What the sync needs. */
export interface IntentSyncOptions {
  readonly store: LiveSessionStore;
  /** The home's public key, read once when the proxy started (hex); null: every update is refused. */
  readonly publicKeyHex: string | null;
  readonly now: () => Date;
  readonly pid: number;
  readonly audit?: IntentAudit;
  readonly log?: (line: string) => void;
}

/** Applies a verified update to the session; resolves once applied, throws when the core refuses it. */
export type ApplyIntentUpdate = (session: Session, update: VerifiedIntentUpdate) => Promise<void>;

/** The per-proxy intent sync. */
export interface IntentSync {
  /** Records a new session (its first call or plan); idempotent. */
  register(id: string, session: Session, agent: string | undefined): void;
  /** Marks a session closed: later updates are refused with a clear error. */
  closed(id: string): void;
  /**
   * Applies updates queued since the last look. Undefined (nothing to wait for) when the counter did not
   * move and no pick-up of the session is in flight: the call is judged at once, without a promise.
   */
  pickUp(id: string, session: Session, apply: ApplyIntentUpdate): Promise<void> | undefined;
}

const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The sync of one proxy: what it has seen of each session's counter, and the pick-up in flight. */
class StoreIntentSync implements IntentSync {
  readonly #o: IntentSyncOptions;
  readonly #seen = new Map<string, number>();
  readonly #running = new Map<string, Promise<void>>();
  readonly #log: (line: string) => void;

  constructor(options: IntentSyncOptions) {
    this.#o = options;
    this.#log = options.log ?? (() => undefined);
  }

  #at(): number {
    return this.#o.now().getTime();
  }

  register(id: string, session: Session, agent: string | undefined): void {
    if (this.#seen.has(id)) return;
    this.#seen.set(id, 0);
    try {
      this.#o.store.register({
        id,
        pid: this.#o.pid,
        ...(agent !== undefined ? { agent } : {}),
        startedAtMs: this.#at(),
        intentVersion: session.intent?.version ?? 0,
        intentHash: session.intentHash ?? "",
      });
    } catch (err) {
      this.#log(`cannot record session \`${id}\` in state.db: ${reason(err)}`);
    }
  }

  closed(id: string): void {
    this.#seen.delete(id);
    try {
      this.#o.store.close(id, this.#at());
    } catch (err) {
      this.#log(`cannot record the end of session \`${id}\`: ${reason(err)}`);
    }
  }

  pickUp(id: string, session: Session, apply: ApplyIntentUpdate): Promise<void> | undefined {
    const inFlight = this.#running.get(id);
    if (inFlight !== undefined) return inFlight;
    let counter: number;
    try {
      counter = this.#o.store.updateSeq(id);
    } catch (err) {
      this.#log(`cannot read intent updates of session \`${id}\`: ${reason(err)}`);
      return undefined;
    }
    if (counter <= (this.#seen.get(id) ?? 0)) return undefined;
    const job = this.#drain(id, session, apply, counter)
      .catch((err: unknown) => this.#log(`intent update of session \`${id}\` failed: ${reason(err)}`))
      .finally(() => this.#running.delete(id));
    this.#running.set(id, job);
    return job;
  }

  /** The newest pending update is the one that counts; older pending ones are superseded. */
  async #drain(id: string, session: Session, apply: ApplyIntentUpdate, counter: number): Promise<void> {
    const rows = this.#o.store.pendingUpdates(id, this.#seen.get(id) ?? 0);
    const last = rows[rows.length - 1];
    for (const row of rows.slice(0, -1)) {
      this.#o.store.settleUpdate(id, row.seq, "superseded", `superseded by update ${last?.seq ?? "?"}`, this.#at());
    }
    if (last !== undefined) await this.#applyOne(session, last, apply);
    this.#seen.set(id, Math.max(counter, last?.seq ?? 0));
  }

  async #refuse(row: IntentUpdateRow, code: string, message: string): Promise<void> {
    this.#o.store.settleUpdate(row.sessionId, row.seq, "rejected", `${code}: ${message}`, this.#at());
    this.#log(`intent update ${row.seq} of session \`${row.sessionId}\` refused: ${message}`);
    await this.#o.audit?.("intent_update_refused", {
      session_id: row.sessionId,
      update_seq: row.seq,
      code,
      reason: message,
    });
  }

  async #applyOne(session: Session, row: IntentUpdateRow, apply: ApplyIntentUpdate): Promise<void> {
    const key = this.#o.publicKeyHex;
    if (key === null)
      return this.#refuse(row, "intent_update_signature_invalid", "this proxy has no home key to verify updates with");
    const checked = verifyIntentUpdate(row, key);
    if (!checked.ok) return this.#refuse(row, checked.code, checked.message);
    if (isFinalSessionState(session.state))
      return this.#refuse(row, "intent_update_session_finished", "the session has ended");
    const from = { version: session.intent?.version ?? 0, hash: session.intentHash };
    try {
      await apply(session, checked.update);
    } catch (err) {
      return this.#refuse(row, "intent_update_refused", reason(err));
    }
    const to = checked.update.compiled;
    const by = checked.update.payload.by;
    this.#o.store.noteIntent(row.sessionId, to.intent.version, to.hash);
    this.#o.store.settleUpdate(
      row.sessionId,
      row.seq,
      "applied",
      `version ${to.intent.version}: ${to.hash}`,
      this.#at(),
    );
    this.#log(`session \`${row.sessionId}\`: intent version ${to.intent.version} (${to.hash}) set by \`${by}\``);
    await this.#o.audit?.("intent_updated", {
      session_id: row.sessionId,
      update_seq: row.seq,
      from_version: from.version,
      from_hash: from.hash,
      to_version: to.intent.version,
      to_hash: to.hash,
      approved_by: by,
      confirmation: "signed intent update (acp intent set)",
      tokens_revoked: true,
    });
  }
}

/**
 * Creates the sync over the live-session store. Failures of the store are logged and never allow anything:
 * the session keeps its current intent.
 */
export function createIntentSync(options: IntentSyncOptions): IntentSync {
  return new StoreIntentSync(options);
}
