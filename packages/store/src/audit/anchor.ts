import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { fsyncDirectory } from "./torn-tail.js";

/** Where the latest checkpoint of a log is kept: `<log>.checkpoint`. */
export function anchorPathOf(logPath: string): string {
  return `${logPath}.checkpoint`;
}

/**
 * Replaces the anchor atomically (write a temporary file, fsync, rename, fsync the directory) with the
 * latest checkpoint line. Written only after that line is durable in the log, so the anchor never
 * points past the log's durable end; `acp audit verify` then detects a log cut after a checkpoint.
 */
export function writeAnchor(logPath: string, checkpointLine: string): void {
  const target = anchorPathOf(logPath);
  const temp = `${target}.tmp-${process.pid}`;
  const fd = openSync(temp, "w", 0o600);
  try {
    writeSync(fd, `${checkpointLine}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, target);
  fsyncDirectory(dirname(target));
}

/**
 * {@link writeAnchor} without blocking the event loop (the writer's path: producers keep staging
 * events while the anchor's two fsyncs wait on the disk). Same steps, same order.
 */
export async function writeAnchorAsync(logPath: string, checkpointLine: string): Promise<void> {
  const target = anchorPathOf(logPath);
  const temp = `${target}.tmp-${process.pid}`;
  const file = await open(temp, "w", 0o600);
  try {
    await file.writeFile(`${checkpointLine}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, target);
  const dir = await open(dirname(target), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** Reads the anchor beside a log, or `undefined` when there is none. */
export function readAnchor(logPath: string): string | undefined {
  try {
    return readFileSync(anchorPathOf(logPath), "utf8").trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
