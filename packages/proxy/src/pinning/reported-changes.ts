import { createHash } from "node:crypto";
import type { ToolChange } from "./compare-pins.js";
import type { ToolPin } from "./pin-store.js";

/**
 * Which tool changes have been reported (logged and audited as `tool_definition_changed`), so that one
 * change is reported once, not at every listing of its server: an upstream lists its tools again at each
 * `notifications/tools/list_changed` (server-everything sends several while it starts), and a held change
 * stays a change at every listing until a person accepts it. Each event then means something new: a change
 * the server's previous listing did not show (a tool newly changed, or changed again to another definition,
 * or changed again after a listing showed it back as pinned, or back in the listing after one without it).
 */
export interface ReportedChanges {
  /**
   * The changes of one listing of `server` not shown by its previous listing (by tool, pin and new
   * definition), marked as reported; what the previous listing showed and this one does not is forgotten.
   */
  unreported(server: string, changes: readonly ToolChange[]): readonly ToolChange[];
  /** Reporting a change failed: it counts as not reported, and the next listing that shows it reports it. */
  unmark(server: string, change: ToolChange): void;
}

/**
 * A pin's definition, without when it was pinned (the new definition's pin is dated at each listing). Plain
 * JSON with the field hashes in order, not canonical JSON: a description with a lone surrogate has no canonical
 * form, and this fingerprint only has to be stable within one proxy.
 */
function definitionHash(pin: ToolPin): string {
  const fields: unknown = pin.field_hashes;
  const hashes =
    typeof fields === "object" && fields !== null && !Array.isArray(fields)
      ? Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      : null;
  const text = JSON.stringify([pin.name, pin.description, pin.input_schema_hash, hashes]);
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** What one change is: the pin it departs from and the definition it departs to. */
function fingerprint(change: ToolChange): string {
  return `${definitionHash(change.before)} ${definitionHash(change.after)}`;
}

/** Creates the record of the changes one proxy reported (bounded by the last listing of each server). */
export function createReportedChanges(): ReportedChanges {
  // per server: the changes its last listing showed, by tool name
  const shown = new Map<string, Map<string, string>>();
  return {
    unreported(server, changes) {
      const before = shown.get(server);
      const now = new Map<string, string>();
      const fresh: ToolChange[] = [];
      for (const change of changes) {
        const print = fingerprint(change);
        now.set(change.tool, print);
        if (before?.get(change.tool) !== print) fresh.push(change);
      }
      shown.set(server, now);
      return fresh;
    },
    unmark(server, change) {
      const now = shown.get(server);
      if (now?.get(change.tool) === fingerprint(change)) now.delete(change.tool);
    },
  };
}
