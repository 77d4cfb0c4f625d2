import { createHash } from "node:crypto";
import { closeSync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { AuditEventInput } from "@acp/core";
import type { ChainPosition, TornBytes } from "./scan-log.js";

/** Bytes copied at a time when a torn tail is moved aside. */
const COPY_CHUNK = 1024 * 1024;

/** What was kept aside when a torn last line was found. */
export interface TornTail {
  /** Where the torn bytes were moved (`audit.jsonl.torn-<time>`). */
  readonly path: string;
  readonly bytes: number;
  /** `sha256:` of the torn bytes, recorded in the `audit_recovered` event. */
  readonly sha256: string;
}

/** Fsyncs a directory so a created or renamed entry survives a power cut. */
export function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function createExclusive(base: string): { fd: number; path: string } {
  for (let n = 0; ; n++) {
    const path = n === 0 ? base : `${base}-${n}`;
    try {
      return { fd: openSync(path, "wx", 0o600), path };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || n > 1000) throw err;
    }
  }
}

/** Copies `torn` of the log (`fd`) into `target` a chunk at a time; returns the bytes copied and their SHA-256. */
function copyTorn(fd: number, torn: TornBytes, target: number): { bytes: number; sha256: string } {
  const hash = createHash("sha256");
  const chunk = Buffer.allocUnsafe(Math.min(COPY_CHUNK, Math.max(1, torn.bytes)));
  let copied = 0;
  while (copied < torn.bytes) {
    const read = readSync(fd, chunk, 0, Math.min(chunk.length, torn.bytes - copied), torn.start + copied);
    if (read === 0) break;
    for (let off = 0; off < read;) off += writeSync(target, chunk, off, read - off);
    hash.update(chunk.subarray(0, read));
    copied += read;
  }
  return { bytes: copied, sha256: `sha256:${hash.digest("hex")}` };
}

/**
 * Keeps a torn tail aside and cuts it from the log: the bytes after the last newline are copied (a chunk
 * at a time: a tail of any size costs one chunk of memory) to a new `<log>.torn-<time>` file (fsynced,
 * directory fsynced) BEFORE the log is truncated back to its last complete line, so a crash in between
 * loses nothing. The caller holds the log's lock and then appends the {@link tornTailEvent}.
 */
export function keepTornTailAside(
  fd: number,
  logPath: string,
  position: ChainPosition,
  torn: TornBytes,
  now: Date,
): TornTail {
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  const target = createExclusive(`${logPath}.torn-${stamp}`);
  let copied;
  try {
    copied = copyTorn(fd, torn, target.fd);
    fsyncSync(target.fd);
  } finally {
    closeSync(target.fd);
  }
  fsyncDirectory(dirname(logPath));
  ftruncateSync(fd, position.size);
  fsyncSync(fd);
  return { path: target.path, ...copied };
}

/** The `audit_recovered` event recording a torn tail: where it went, its size and hash, and after which line. */
export function tornTailEvent(tail: TornTail, position: ChainPosition): AuditEventInput {
  return {
    event_type: "audit_recovered",
    metadata: {
      reason: "torn_last_line",
      torn_file: basename(tail.path),
      torn_bytes: tail.bytes,
      torn_sha256: tail.sha256,
      after_line: position.count,
      after_event_hash: position.head,
    },
  };
}
