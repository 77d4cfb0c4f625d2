import { createLiveSessionStore, readPublicKeyHex } from "@acp/store";
import type { AuditSink } from "@acp/proxy";
import type { HomeState } from "./home-state.js";
import { createIntentSync, type IntentSync } from "./session-intent-sync.js";

/** What {@link createHomeIntentSync} takes. */
export interface HomeIntentSyncOptions {
  readonly state: HomeState;
  readonly audit?: AuditSink;
  readonly now: () => Date;
  readonly log: (line: string) => void;
  /** The proxy's process id (recorded with each session); default `process.pid`. */
  readonly pid?: number;
}

/**
 * The intent sync of a proxy that has a home: live sessions in `state.db`, updates verified with
 * `keys/public.key` as read now (a key swapped in later does not count). Undefined without a home: then
 * nobody can change a live session's intent.
 */
export function createHomeIntentSync(options: HomeIntentSyncOptions): IntentSync | undefined {
  const db = options.state.db();
  if (db === null) return undefined;
  const key = readPublicKeyHex(options.state.home);
  if (!key.ok) options.log(`no public key in the home: \`acp intent set\` updates will be refused`);
  const audit = options.audit;
  return createIntentSync({
    store: createLiveSessionStore(db),
    publicKeyHex: key.ok ? key.value : null,
    now: options.now,
    pid: options.pid ?? process.pid,
    log: options.log,
    ...(audit !== undefined ? { audit: (type, fields) => audit.record(type, fields) } : {}),
  });
}
