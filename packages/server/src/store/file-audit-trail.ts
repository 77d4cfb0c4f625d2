/** The audit chain read from the JSONL file the writer appends to (`$ACP_HOME/audit.jsonl`). */
import { open, stat } from "node:fs/promises";
import {
  canContinueAuditVerification,
  parseAuditLine,
  verifyAuditChain,
  type AuditEventV02,
  type CheckpointPublicKey,
  type VerifyAuditOptions,
} from "@acp/core";
import { countAuditFileLines, readAnchor, readAuditFileLinesBackward, verifyAuditFile } from "@acp/store";
import {
  continuedVerification,
  type ChainSource,
  type ContinuedVerificationOptions,
  type SourceVerification,
} from "./continued-verification.js";
import type { AuditEntry, AuditPage, AuditQuery, AuditTrail } from "./types.js";

/** Options of {@link createFileAuditTrail}. */
export interface FileAuditTrailOptions extends ContinuedVerificationOptions {
  /** Checkpoint signatures are checked with this key when given. */
  readonly publicKey?: CheckpointPublicKey;
}

/** Where a verification of the file ended: the file, and its last verified line's bytes and place. */
interface FilePlace {
  readonly dev: number;
  readonly ino: number;
  /** Byte offset of the last verified line. */
  readonly start: number;
  /** Byte offset just past its newline: where the next line begins. */
  readonly end: number;
  /** Its bytes, newline included (empty for an empty log). */
  readonly line: Buffer;
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === "ENOENT";
}

/** Whether `bytes` are still in the file at `start` (read with one `pread`). */
async function holdsBytes(path: string, start: number, bytes: Buffer): Promise<boolean> {
  if (bytes.length === 0) return true;
  const handle = await open(path, "r");
  try {
    const found = Buffer.alloc(bytes.length);
    const { bytesRead } = await handle.read(found, 0, bytes.length, start);
    return bytesRead === bytes.length && found.equals(bytes);
  } finally {
    await handle.close();
  }
}

/** The JSONL log as a {@link ChainSource}: read line by line, continued from a byte offset. */
function fileChain(path: string, publicKey: CheckpointPublicKey | undefined): ChainSource<FilePlace> {
  const optionsNow = (): VerifyAuditOptions => {
    const anchor = readAnchor(path);
    return { ...(publicKey !== undefined ? { publicKey } : {}), ...(anchor !== undefined ? { anchor } : {}) };
  };
  return {
    async verify(from): Promise<SourceVerification<FilePlace>> {
      const options = optionsNow();
      let file;
      try {
        file = await stat(path);
      } catch (err) {
        if (isMissing(err)) return { verification: verifyAuditChain([], options) };
        throw err;
      }
      const resume = from === undefined ? {} : { from: from.verification, start: from.at.end };
      const { verification, progress } = await verifyAuditFile(path, { ...options, ...resume });
      if (!verification.ok || progress.unterminated) return { verification };
      const same = { dev: file.dev, ino: file.ino };
      if (progress.lines === 0) {
        return { verification, at: from?.at ?? { ...same, start: 0, end: 0, line: Buffer.alloc(0) } };
      }
      const line = Buffer.from(`${progress.lastLine}\n`, "utf8");
      return { verification, at: { ...same, start: progress.lastStart, end: progress.end, line } };
    },
    async holds({ verification, at }): Promise<boolean> {
      try {
        const file = await stat(path);
        if (file.dev !== at.dev || file.ino !== at.ino || file.size < at.end) return false;
        return (await holdsBytes(path, at.start, at.line)) && canContinueAuditVerification(verification, optionsNow());
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
    },
  };
}

function matches(event: AuditEventV02, query: AuditQuery, needle: string | null): boolean {
  if (query.eventType !== undefined && event.event_type !== query.eventType) return false;
  if (query.tool !== undefined && event.tool !== query.tool) return false;
  if (query.agent !== undefined && event.agent !== query.agent) return false;
  if (query.decision !== undefined && event.decision !== query.decision) return false;
  if (query.requestId !== undefined && event.request_id !== query.requestId) return false;
  return needle === null || JSON.stringify(event).toLowerCase().includes(needle);
}

/**
 * Reads the chain at `path` on each call (the file is the truth; other processes append). Verification
 * is continued: each call reads only the lines appended since the last one (see {@link continuedVerification}).
 */
export function createFileAuditTrail(
  path: string,
  options: FileAuditTrailOptions = {},
): AuditTrail & { readonly idle: () => Promise<void> } {
  const { publicKey, ...continued } = options;
  const verification = continuedVerification(fileChain(path, publicKey), continued);
  return {
    // the file is counted, then read backwards from `before` until the page is full: one chunk and the
    // page in memory, however long the log
    async list(query): Promise<AuditPage> {
      const extent = await countAuditFileLines(path);
      const needle = query.q === undefined || query.q === "" ? null : query.q.toLowerCase();
      const events: AuditEntry[] = [];
      const first = Math.min(extent.lines, (query.before ?? extent.lines + 1) - 1);
      /** 0-based index of the next line to look at. */
      let index = first - 1;
      if (index >= 0 && events.length < query.limit) {
        for await (const { line, text } of readAuditFileLinesBackward(path, extent)) {
          if (line > first) continue;
          const parsed = parseAuditLine(text);
          if (parsed.ok && matches(parsed.value, query, needle)) events.push({ line, event: parsed.value });
          index = line - 2;
          if (events.length >= query.limit) break;
        }
      }
      const next = index >= 0 && events.length === query.limit ? index + 2 : null;
      return { events, total: extent.lines, next };
    },
    verify: verification.verify,
    idle: verification.idle,
  };
}
