import { lstatSync } from "node:fs";
import { basename, join } from "node:path";
import { parseAuditLine, readCheckpoint, verifyCheckpointSignature } from "@acp/core";
import {
  anchoredMarkerPathOf,
  anchorPathOf,
  CHECKPOINT_MARKER_TEXT,
  hasAnchoredMarker,
  readAnchorFile,
  readAuditFileLines,
  readPublicKeyHex,
  type HomeCheck,
} from "@acp/store";

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The line an anchor's checkpoint must be at in the log (`count + 1`), or `null` when it is not a checkpoint. */
function anchorLine(anchor: string): number | null {
  const parsed = parseAuditLine(anchor);
  if (!parsed.ok || parsed.value.event_type !== "checkpoint") return null;
  const read = readCheckpoint(parsed.value);
  return read.ok ? read.value.body.count + 1 : null;
}

/**
 * Whether a checkpoint line was signed with another key than the home's (`false` when the home has no
 * readable public key: the key checks say so, and `acp audit verify` asks for one).
 */
function signedWithAnotherKey(line: string, home: string): boolean {
  const pub = readPublicKeyHex(home);
  if (!pub.ok) return false;
  const parsed = parseAuditLine(line);
  if (!parsed.ok) return false;
  const read = readCheckpoint(parsed.value);
  return read.ok && !verifyCheckpointSignature(read.value.body, read.value.signature, pub.value);
}

/**
 * The failed check of a log whose checkpoints another key signed: written before `acp init` made this
 * home's key (an `acp proxy` run before it signed with a key thrown away at exit; `acp init --force`
 * replaced the key). `acp init` moves such a log aside now; one already there stays until moved.
 */
function anotherKey(path: string, anchorFile: string, line: number, writers: string): HomeCheck {
  return {
    status: "fail",
    name: "audit log",
    detail:
      `${path}: its signed checkpoint at line ${line} does not verify with this home's key (keys/public.key): ` +
      "it was signed with another key, before `acp init` made this one (an acp proxy run before acp init, " +
      `or the key replaced by \`acp init --force\`); acp audit verify refuses it and ${writers}. ` +
      `Move ${basename(path)}, ${anchorFile} and ${basename(path)}.anchored aside together (to ${basename(path)}.before-init-<time>, as ` +
      "acp init does now): the next audited command starts a new log",
  };
}

/**
 * The `audit log` check: whether the home's file log (`audit.jsonl`) still holds the signed checkpoint of
 * its anchor (`audit.jsonl.checkpoint`) at its line, byte for byte, as `acp proxy` and `acp run` require
 * before they extend it. A mismatch fails (they refuse: `audit_anchor_mismatch`), and so does no anchor
 * while the log's marker (`audit.jsonl.anchored`) says it had one (`audit_anchor_missing`). No anchor (nor
 * marker) while the log holds checkpoints is a warning: the next writer verifies the log in full and anchors it again, and
 * `acp audit verify` checks it first. Hashes, links and signatures are `acp audit verify`'s to check.
 */
export async function checkAuditLogAnchor(home: string): Promise<HomeCheck> {
  const name = "audit log";
  const path = join(home, "audit.jsonl");
  const anchorPath = anchorPathOf(path);
  const file = basename(path);
  const anchorFile = basename(anchorPath);
  const verify = "run `acp audit verify` to find where the log was cut or rewritten";
  let anchor: string | undefined;
  try {
    anchor = readAnchorFile(anchorPath, { regularOnly: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT")
      return { status: "fail", name, detail: `${anchorPath}: ${messageOf(err)}` };
  }
  const refuses = "acp proxy and acp run refuse to extend it (audit_anchor_mismatch)";
  const stat = lstatSync(path, { throwIfNoEntry: false });
  // a pipe or a device would be waited on for ever; a link is not the home's own file
  if (stat !== undefined && !stat.isFile())
    return { status: "fail", name, detail: `${path} is not a regular file (a link, a pipe or a device)` };
  // its marker says it had an anchor: deleted since (perhaps with the log cut back), whatever the log holds now
  if (anchor === undefined && hasAnchoredMarker(path)) {
    const marker = basename(anchoredMarkerPathOf(path));
    return {
      status: "fail",
      name,
      detail:
        `${path}: its anchor ${anchorFile} is missing, though ${marker} records that it had one (deleted, perhaps ` +
        `with the log cut back): acp audit verify fails it (anchor_missing) and acp proxy and acp run refuse it ` +
        `(audit_anchor_missing). Put the anchor back if a copy was kept; once you know why it is gone, remove ${marker}`,
    };
  }
  if (stat === undefined) {
    return anchor === undefined
      ? { status: "ok", name, detail: `no ${file} yet (the first audited command starts it)` }
      : {
          status: "fail",
          name,
          detail: `${path} is missing but its anchor ${anchorFile} is there: ${refuses}; ${verify}`,
        };
  }
  const expected = anchor === undefined ? undefined : anchorLine(anchor);
  if (expected === null)
    return { status: "fail", name, detail: `${anchorPath} is not a checkpoint line: ${refuses}; ${verify}` };
  let lastCheckpoint = 0;
  let lastCheckpointText = "";
  let lines = 0;
  try {
    for await (const line of readAuditFileLines(path)) {
      lines++;
      if (expected !== undefined) {
        if (lines < expected) continue;
        if (line === anchor) {
          if (signedWithAnotherKey(line, home))
            return anotherKey(path, anchorFile, expected, "acp proxy and acp run extend it unchecked");
          return { status: "ok", name, detail: `${file}: its anchor's signed checkpoint is line ${expected}` };
        }
        return {
          status: "fail",
          name,
          detail: `${path}: line ${expected} is not the signed checkpoint of its anchor ${anchorFile}: ${refuses}; ${verify}`,
        };
      }
      if (line.includes(CHECKPOINT_MARKER_TEXT)) {
        lastCheckpoint = lines;
        lastCheckpointText = line;
      }
    }
  } catch (err) {
    return { status: "fail", name, detail: `${path}: ${messageOf(err)}` };
  }
  if (expected !== undefined) {
    return {
      status: "fail",
      name,
      detail: `${path} ends before line ${expected}, its anchor's signed checkpoint (${anchorFile}): the log was cut; ${refuses}; ${verify}`,
    };
  }
  if (lastCheckpoint === 0) return { status: "ok", name, detail: `${file}: ${lines} lines, no signed checkpoint yet` };
  if (signedWithAnotherKey(lastCheckpointText, home))
    return anotherKey(path, anchorFile, lastCheckpoint, "acp proxy and acp run refuse it (audit_anchor_missing)");
  return {
    status: "warn",
    name,
    detail:
      `${path} holds signed checkpoints (the last at line ${lastCheckpoint}) but no anchor beside it (${anchorFile}): ` +
      "check it with `acp audit verify`; the next acp proxy or acp run verifies it in full with the home's key " +
      "and anchors it again (refusing it with audit_anchor_missing if it does not verify). Put the anchor back " +
      "if it was lost; if the log was not moved or restored, find out why it is missing",
  };
}
