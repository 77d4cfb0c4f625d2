/**
 * `$ACP_HOME/serve.json`: where the running service listens, so `acp console-link` can print a link
 * to it. Written 0600 when the service starts, removed when it stops.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { readFileUpTo, writeFileAtomic } from "@acp/store";

/** Largest `serve.json` read (the service writes a few hundred bytes). */
const MAX_SERVE_STATE_BYTES = 16 * 1024;

/** What the running service tells other processes. */
export interface ServeState {
  /** The base URL a browser on this machine opens (`http://127.0.0.1:8787`). */
  readonly url: string;
  /** The public URL (a reverse proxy in front), which links are made with, when one is set. */
  readonly public_url?: string;
  readonly pid: number;
  readonly started_at: string;
  /** Where its state lives: `sqlite`, or `postgres` (then `acp console-link` needs the same storage URL). */
  readonly storage?: "sqlite" | "postgres";
}

/** The file's path. */
export function serveStatePath(home: string): string {
  return join(home, "serve.json");
}

/** Writes the file (atomically, 0600). */
export function writeServeState(home: string, state: ServeState): void {
  writeFileAtomic(serveStatePath(home), `${JSON.stringify(state, null, 2)}\n`);
}

/**
 * Reads the file; null when there is none or it is unreadable. Read as the home's other files are: at most
 * 16 KiB, and only a regular file (a pipe planted there is not waited on: it hung `acp console-link`).
 */
export function readServeState(home: string): ServeState | null {
  try {
    const bytes = readFileUpTo(serveStatePath(home), MAX_SERVE_STATE_BYTES, { regularOnly: true });
    if (bytes === undefined) return null;
    const value = JSON.parse(bytes.toString("utf8")) as Partial<ServeState>;
    if (typeof value.url !== "string" || typeof value.pid !== "number") return null;
    return {
      url: value.url,
      pid: value.pid,
      started_at: String(value.started_at ?? ""),
      ...(typeof value.public_url === "string" ? { public_url: value.public_url } : {}),
      ...(value.storage === "postgres" || value.storage === "sqlite" ? { storage: value.storage } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * Removes the file when the service `pid` (default this process) stops — unless it now names another
 * service: two services overlap on one home (a restart that starts the new one before the old one stops,
 * two nodes on one machine), and the one stopping must not take away the file of the one still running.
 * An unreadable file is removed.
 */
export function removeServeState(home: string, pid: number = process.pid): void {
  const current = readServeState(home);
  if (current !== null && current.pid !== pid) return;
  rmSync(serveStatePath(home), { force: true });
}
