import { hostname } from "node:os";
import { listLockHolders } from "../audit/file-lock.js";
import { homePaths } from "./paths.js";

/** A process that writes the home's audit log now: an `acp proxy`, `acp run` or `acp serve` on this home. */
export interface HomeWriter {
  readonly pid: number;
  readonly host: string;
  /** Its holder file beside `audit.jsonl.lock` (or the lock itself): remove it if the process is no acp. */
  readonly path: string;
}

/**
 * The processes that hold the home's audit log open as writers: every audit writer keeps a holder file
 * beside `audit.jsonl.lock` (`audit.jsonl.lock.<pid>.<8 hex>`) from its open until it closes or its process
 * exits. One left by a process of this host that is gone (killed) does not count. One of another host (a
 * home on a shared file system) cannot be judged from here and counts: fail closed.
 */
export function liveHomeWriters(home: string): HomeWriter[] {
  const seen = new Set<string>();
  const writers: HomeWriter[] = [];
  for (const h of listLockHolders(`${homePaths(home).audit}.lock`)) {
    const key = `${h.host}\n${h.pid}`;
    if (seen.has(key)) continue;
    seen.add(key);
    writers.push({ pid: h.pid, host: h.host, path: h.path });
  }
  return writers;
}

/** `pid 1234` here, `pid 1234 on other-host` for another host. */
function named(w: HomeWriter): string {
  return w.host === hostname() ? `pid ${w.pid}` : `pid ${w.pid} on ${w.host}`;
}

/**
 * Why `acp init` will not touch a home a live writer holds, and what to do: stop the writer (the `acp proxy`
 * an MCP client started, `acp run`, `acp serve`) and run init again; a pid that is no acp process (the pid of
 * a killed writer given to another process) is cleared by removing its holder file.
 */
export function homeInUseMessage(home: string, writers: readonly HomeWriter[]): string {
  const who = writers.map(named).join(", ");
  const files = writers.map((w) => `\`${w.path}\``).join(", ");
  return (
    `\`${home}\` is in use: ${who} writes its audit log (an acp proxy, acp run or acp serve on this home); ` +
    `stop it (quit the MCP client that started acp proxy, or stop acp serve) and run acp init again. ` +
    `If that process is no acp process, remove ${files}`
  );
}
