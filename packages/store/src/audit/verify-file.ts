import { stat } from "node:fs/promises";
import { verifyAuditStream, type AuditVerification, type VerifyAuditOptions } from "@acp/core";
import { readAuditFileLines, type AuditFileProgress } from "./read-lines.js";

/** Options of {@link verifyAuditFile}. */
export interface VerifyAuditFileOptions extends VerifyAuditOptions {
  /** With `from`: the byte offset where the lines after that prefix begin. */
  readonly start?: number;
}

/** A file's verification and how far its lines were read. */
export interface AuditFileVerification {
  readonly verification: AuditVerification;
  /** The reader's progress: with an `ok` verification, the last line read is the last line verified. */
  readonly progress: AuditFileProgress;
}

/**
 * Verifies the JSONL log at `path` as {@link verifyAuditStream} does, reading it line by line (one
 * line in memory; after a broken link the file is read again from the start to name the problem, unless it
 * is a pipe, which is read once).
 * Rejects when the file cannot be read (a missing file with `ENOENT`).
 */
export async function verifyAuditFile(
  path: string,
  options: VerifyAuditFileOptions = {},
): Promise<AuditFileVerification> {
  const { start, ...verify } = options;
  const lines = readAuditFileLines(path, start === undefined ? {} : { start });
  // a pipe (`acp audit verify /dev/stdin`) cannot be read twice: the verifier then tells a moved line from a
  // removed one by the last hashes it saw (RECENT_AUDIT_HASHES)
  const again = (await stat(path)).isFile();
  const verification = await verifyAuditStream(lines.batches(), {
    ...verify,
    ...(again ? { reread: () => readAuditFileLines(path).batches() } : {}),
  });
  return { verification, progress: lines.progress };
}
