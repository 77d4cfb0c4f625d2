import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { anchoredMarkerPathOf, hasAnchoredMarker, readAnchor, verifyAuditFile } from "@acp/store";

/** What a guard whose audit log stopped recording says to do, after the audit's own error. */
export const REOPEN_HINT =
  "nothing runs until the audit log records again: see what is wrong with `acp audit verify`, mend it, then call the guard's `reopen()`";

/** The home's checkpoint key (`keys/public.key`, 64 hex digits), or `undefined` when the home has none. */
function publicKeyOf(home: string): string | undefined {
  const path = join(home, "keys", "public.key");
  if (!existsSync(path)) return undefined;
  const hex = readFileSync(path, "utf8").trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`\`${path}\` is not 64 hex digits (a raw Ed25519 key)`);
  return hex.toLowerCase();
}

/**
 * Why the home's audit log must not be recorded to again, or `null` when it verifies as `acp audit
 * verify` verifies it: every line's hash and link, each checkpoint's signature with the home's key, and
 * the checkpoint kept beside it (`audit.jsonl.checkpoint`) still in the log, or there at all when the log's
 * marker (`audit.jsonl.anchored`) says it had one. A log that is missing is a
 * problem too: a new one would start a new chain where the old one was (put it back, or open a new guard
 * knowing that).
 */
export async function auditLogProblem(home: string): Promise<string | null> {
  const file = join(home, "audit.jsonl");
  try {
    if (!existsSync(file)) return `\`${file}\` is missing: it was deleted or moved (put it back)`;
    const anchor = readAnchor(file);
    // its marker says it had an anchor: the writer refuses it (audit_anchor_missing), as acp audit verify fails it
    if (anchor === undefined && hasAnchoredMarker(file))
      return `\`${file}.checkpoint\` is missing, though \`${anchoredMarkerPathOf(file)}\` records that the log had one: the anchor was deleted, perhaps with the log cut back (anchor_missing)`;
    const publicKey = publicKeyOf(home);
    const { verification } = await verifyAuditFile(file, {
      ...(anchor !== undefined ? { anchor } : {}),
      ...(publicKey !== undefined ? { publicKey } : {}),
    });
    if (verification.ok) return null;
    const problem = verification.problem;
    if (problem === null) return `\`${file}\` does not verify`;
    const where = problem.where === "anchor" ? `its checkpoint anchor (line ${problem.line})` : `line ${problem.line}`;
    return `\`${file}\` does not verify at ${where}: ${problem.message} (${problem.code})`;
  } catch (err) {
    return `\`${file}\` cannot be verified: ${err instanceof Error ? err.message : String(err)}`;
  }
}
