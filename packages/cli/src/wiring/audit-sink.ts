import { join } from "node:path";
import { auditEventInput, type AuditEventInput, type CheckpointSigner, type RedactionRules } from "@acp/core";
import { openAuditLog, reanchoredMessage, type AuditLog } from "@acp/store";
import type { AuditSink } from "@acp/proxy";

/** An audit sink over `$ACP_HOME/audit.jsonl` (opened on first use), or one that drops events without a home. */
export interface ClosableAuditSink extends AuditSink {
  close(): Promise<void>;
  /**
   * After a failed write: lets go of the log that stopped recording (its lock and file) and forgets the
   * failure, so the next event opens the log again (its tail recovered as at any open). The caller checks
   * first that the log is sound (the in-process guard's `reopen()` verifies the chain). No-op otherwise.
   */
  reopen(): Promise<void>;
}

/**
 * How long a group commit of accept events waits for more of them (the writer's `commitDelayMs`): one
 * lock, write and `fdatasync` then serve the calls of ~20 ms instead of ~5 ms (the pause between two
 * commits of one writer), about a quarter less user CPU for the audit per call (measured in process:
 * 226 -> 172 us); a longer pause (50 ms) saved nothing more. It is also how much longer an accept event
 * may stay in memory only. An event a call waits on (below) is committed at once.
 */
export const ACCEPT_COMMIT_DELAY_MS = 20;

/**
 * Events a call waits on until they are on disk (`fsync: every` semantics, by group commit): every event
 * but those of a plainly accepted call — every consent decision (with its signed response), every
 * credential use, a decision that stops the call, an upstream failure, a person's intent update (or its
 * refusal), a changed tool definition, the sandbox's events. The events of a plainly accepted call
 * (`tool_call_intercepted`, `policy_evaluated` accept, `tool_call_forwarded`, `tool_call_completed`) are
 * `fsync: batch`: each is recorded, in order, before the step it records goes on (before the call is
 * forwarded, before its answer is returned) and appended to the writer's queue (redacted, staged) at the
 * end of that turn of the event loop, off the call's path (an event a call waits on first appends those
 * recorded before it), and made durable by a group commit that
 * starts once the oldest queued event has waited {@link ACCEPT_COMMIT_DELAY_MS} (at once when an awaited
 * event is queued behind it), and is not awaited. A crash can lose the accept events appended in the
 * last 20 ms plus one commit's time, never a consent event (see docs/reference/audit.md, "Durability in
 * acp proxy"). A failed write is remembered and refuses the next event, so nothing proceeds on an audit
 * that stopped recording.
 */
function mustBeDurable(eventType: string, fields: Record<string, unknown>): boolean {
  switch (eventType) {
    case "tool_call_intercepted":
    case "tool_call_forwarded":
    case "tool_call_completed":
      return false;
    case "policy_evaluated":
      return fields["decision"] !== "accept";
    default:
      return true;
  }
}

/** Opens the home's audit log lazily (`fsync: batch`, group commit; consent events awaited, see above). */
export function createHomeAuditSink(options: {
  readonly home: string | null;
  readonly clock: () => Date;
  readonly signer: () => Promise<CheckpointSigner | undefined>;
  /** Patterns redacted before hashing (config.yml `redaction:`); default the built-in rules. */
  readonly redaction?: RedactionRules;
  /** The vault values in use, redacted wherever they appear. */
  readonly secrets?: () => readonly string[];
  /** Tells the person one line (the command's stderr): here, that the log was found without its anchor. */
  readonly log?: (line: string) => void;
}): ClosableAuditSink {
  if (options.home === null)
    return { record: () => undefined, close: () => Promise.resolve(), reopen: () => Promise.resolve() };
  const path = join(options.home, "audit.jsonl");
  let log: Promise<AuditLog> | undefined;
  let opened: AuditLog | undefined;
  let failure: string | undefined;
  const open = (): Promise<AuditLog> => {
    log ??= options
      .signer()
      .then((signer) =>
        openAuditLog(path, {
          clock: options.clock,
          fsync: "batch",
          commitDelayMs: ACCEPT_COMMIT_DELAY_MS,
          ...(signer !== undefined ? { signer } : {}),
          ...(options.redaction !== undefined ? { redaction: options.redaction } : {}),
          ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
        }),
      )
      .then((opening) => {
        if (opening.reanchored !== null) options.log?.(reanchoredMessage(opening, opening.reanchored));
        return (opened = opening);
      });
    return log;
  };
  const fail = (err: unknown): void => {
    failure ??= err instanceof Error ? err.message : JSON.stringify(err);
  };
  // accept events recorded since the last turn of the event loop, appended (redacted, staged) at its end
  let deferred: AuditEventInput[] = [];
  let scheduled = false;
  const appendDeferred = (to: AuditLog): void => {
    const batch = deferred;
    deferred = [];
    scheduled = false;
    for (const input of batch) to.append(input).catch(fail);
  };
  return {
    async record(eventType, fields) {
      if (failure !== undefined) throw new Error(`the audit log stopped recording: ${failure}`);
      const durable = mustBeDurable(eventType, fields);
      // made into an event now (a field that is not JSON refuses this call, as before); redacted and staged
      // at the end of this turn: the proxy builds `fields` per event and changes none of it later
      if (!durable && opened !== undefined) {
        deferred.push(auditEventInput(eventType, fields));
        if (!scheduled) {
          scheduled = true;
          const to = opened;
          setImmediate(() => appendDeferred(to));
        }
        return;
      }
      const to = await open();
      appendDeferred(to); // what was recorded before stays before
      const written = to.append(auditEventInput(eventType, fields), { urgent: durable });
      if (durable) {
        await written;
        return;
      }
      written.catch(fail);
    },
    async reopen() {
      if (failure === undefined) return;
      const failed = log;
      log = undefined;
      opened = undefined;
      deferred = []; // accept events the failed log could not take
      // closing a log that stopped recording rejects with its failure, after letting go of its lock and file
      await failed?.then((to) => to.close()).catch(() => undefined);
      failure = undefined;
    },
    async close() {
      if (log === undefined) return;
      const to = await log;
      appendDeferred(to);
      await to.close();
    },
  };
}
