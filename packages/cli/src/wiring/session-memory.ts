import { parseSessionSettings, type ProvenanceMemory } from "@acp/core";
import { createProvenanceMemoryStore, loadMemoryKey, type ProvenanceMemoryStore } from "@acp/store";
import type { HomeState } from "./home-state.js";

/** Failures to remember logged in a row before the proxy only counts them (one line per this many after). */
const LOG_EVERY = 100;

/**
 * The session runtime's memory of earlier sessions, kept in the home's `state.db` (`provenance_memory`,
 * HMAC digests only, under the key in the home's `memory.key`, created 0600 when missing) for `provenance.remember_hours` of the config file's `session:` block (default 24;
 * 0: none). Every proxy of the home shares it, so an identifier one agent read in untrusted content stays
 * tainted for the home's later sessions. Without a home: none (nothing outlives the process anyway).
 *
 * Recall runs inside a decision: a store that fails there — `state.db` or the key cannot be opened, the key
 * is open to others or not a key — fails the decision (refused), and opening is tried again at the next
 * call. Remember runs as a result is recorded: a failure is logged and the result is recorded all the same.
 */
export function createHomeProvenanceMemory(options: {
  readonly state: HomeState;
  readonly settings: unknown;
  readonly now: () => Date;
  readonly log: (line: string) => void;
}): ProvenanceMemory | undefined {
  const parsed = parseSessionSettings(options.settings);
  const hours = parsed.ok ? parsed.value.provenance.remember_hours : 0;
  if (hours === 0) return undefined;
  let store: ProvenanceMemoryStore | undefined;
  const open = (): ProvenanceMemoryStore | undefined => {
    if (store !== undefined) return store;
    const db = options.state.db();
    if (db === null) return undefined;
    const key = loadMemoryKey(options.state.home);
    if (!key.ok) throw new Error(key.issues.map((i) => i.message).join("; "));
    store = createProvenanceMemoryStore(db, { key: key.value, now: options.now, rememberMs: hours * 3_600_000 });
    return store;
  };
  let failures = 0;
  return {
    recall: (identity) => open()?.recall(identity),
    remember(identities, source) {
      try {
        open()?.remember(identities, source);
      } catch (err) {
        if (failures++ % LOG_EVERY === 0) {
          const message = err instanceof Error ? err.message : String(err);
          options.log(
            `the session's memory could not keep what \`${source}\` held (${failures} failure(s) so far): ${message}; later sessions will not know it was read`,
          );
        }
      }
    },
  };
}
