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
  /** Applies updates queued since the last look; cheap when the counter did not move. */
  pickUp(id: string, session: Session, apply: ApplyIntentUpdate): Promise<void>;
}

/**
 * Creates the sync over the live-session store. Failures of the store are logged and never allow anything:
 * the session keeps its current intent.
 */
export function createIntentSync(options: IntentSyncOptions): IntentSync {
  const seen = new Map<string, number>();
  const running = new Map<string, Promise<void>>();
  const log = options.log ?? (() => undefined);
  const at = (): number => options.now().getTime();

  const refuse = async (row: IntentUpdateRow, code: string, message: string): Promise<void> => {
    options.store.settleUpdate(row.sessionId, row.seq, "rejected", `${code}: ${message}`, at());
    log(`intent update ${row.seq} of session \`${row.sessionId}\` refused: ${message}`);
    await options.audit?.("intent_update_refused", {
      session_id: row.sessionId,
      update_seq: row.seq,
      code,
      reason: message,
    });
  };

  const applyOne = async (session: Session, row: IntentUpdateRow, apply: ApplyIntentUpdate): Promise<void> => {
    if (options.publicKeyHex === null)
      return refuse(row, "intent_update_signature_invalid", "this proxy has no home key to verify updates with");
    const checked = verifyIntentUpdate(row, options.publicKeyHex);
    if (!checked.ok) return refuse(row, checked.code, checked.message);
    const fromVersion = session.intent?.version ?? 0;
    const fromHash = session.intentHash;
    if (isFinalSessionState(session.state))
      return refuse(row, "intent_update_session_finished", "the session has ended");
    try {
      await apply(session, checked.update);
    } catch (err) {
      return refuse(row, "intent_update_refused", err instanceof Error ? err.message : String(err));
    }
    const to = checked.update.compiled;
    options.store.noteIntent(row.sessionId, to.intent.version, to.hash);
    options.store.settleUpdate(row.sessionId, row.seq, "applied", `version ${to.intent.version}: ${to.hash}`, at());
    log(
      `session \`${row.sessionId}\`: intent version ${to.intent.version} (${to.hash}) set by \`${checked.update.payload.by}\``,
    );
    await options.audit?.("intent_updated", {
      session_id: row.sessionId,
      update_seq: row.seq,
      from_version: fromVersion,
      from_hash: fromHash,
      to_version: to.intent.version,
      to_hash: to.hash,
      approved_by: checked.update.payload.by,
      confirmation: "signed intent update (acp intent set)",
      tokens_revoked: true,
    });
  };

  const drain = async (id: string, session: Session, apply: ApplyIntentUpdate, counter: number): Promise<void> => {
    const rows = options.store.pendingUpdates(id, seen.get(id) ?? 0);
    const last = rows[rows.length - 1];
    for (const row of rows.slice(0, -1)) {
      options.store.settleUpdate(id, row.seq, "superseded", `superseded by update ${last?.seq ?? "?"}`, at());
    }
    if (last !== undefined) await applyOne(session, last, apply);
    seen.set(id, Math.max(counter, last?.seq ?? 0));
  };

  return {
    register(id, session, agent) {
      if (seen.has(id)) return;
      seen.set(id, 0);
      try {
        options.store.register({
          id,
          pid: options.pid,
          ...(agent !== undefined ? { agent } : {}),
          startedAtMs: at(),
          intentVersion: session.intent?.version ?? 0,
          intentHash: session.intentHash ?? "",
        });
      } catch (err) {
        log(`cannot record session \`${id}\` in state.db: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    closed(id) {
      seen.delete(id);
      try {
        options.store.close(id, at());
      } catch (err) {
        log(`cannot record the end of session \`${id}\`: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    async pickUp(id, session, apply) {
      const inFlight = running.get(id);
      if (inFlight !== undefined) return inFlight;
      let counter: number;
      try {
        counter = options.store.updateSeq(id);
      } catch (err) {
        log(`cannot read intent updates of session \`${id}\`: ${err instanceof Error ? err.message : String(err)}`);
        return;
      }
      if (counter <= (seen.get(id) ?? 0)) return;
      const job = drain(id, session, apply, counter)
        .catch((err: unknown) =>
          log(`intent update of session \`${id}\` failed: ${err instanceof Error ? err.message : String(err)}`),
        )
        .finally(() => running.delete(id));
      running.set(id, job);
      return job;
    },
  };
}
