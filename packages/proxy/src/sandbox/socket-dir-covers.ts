/**
 * The home's socket directories (`SOCKET_HOME_DIRS`: `~/.ssh`, `~/.gnupg`, Docker's, podman's), covered whole:
 * a program started after the sandbox puts its socket there (an `ssh` with `ControlMaster auto` in `~/.ssh`,
 * `gpg-agent` in `~/.gnupg`), where the start-up search (`findUserSockets`) cannot have seen it, and a socket
 * deeper than that search looks is missed too. So the init mounts an empty tmpfs over each one that exists and
 * fills it with copies of its directories, regular files and symbolic links (made read-only afterwards): the
 * agent still reads `~/.ssh/config`, `known_hosts` and `~/.gnupg`'s public keys, and no socket there, made
 * before or after the start, at any depth, is reachable. Sockets, pipes and device nodes are not copied.
 *
 * What is copied is listed here, at start, by a walk that goes `DEEP_DEPTH` levels down and stops at
 * `SOCKET_DIR_COPY_ENTRIES` entries and `SOCKET_DIR_COPY_BYTES` bytes of files (for all the directories
 * together, `~/.ssh` first): what lies past that is left out inside, not reachable. The init copies each file
 * as it is then (a file that is no longer a regular file is left out).
 */
import { lstatSync, readdirSync, readlinkSync, statSync, type Stats } from "node:fs";
import { userInfo } from "node:os";
import { isAbsolute, join } from "node:path";
import type { CoverMount } from "./init-source.js";
import { DEEP_DEPTH, SOCKET_HOME_DIRS } from "./home-sockets.js";
import { isWithin, realPathOrNull } from "./paths.js";

/** The most entries copied into the socket directories' covers, all of them together. */
export const SOCKET_DIR_COPY_ENTRIES = 4_000;
/** The most bytes of files copied into them, all of them together (kept in memory, charged to the agent). */
export const SOCKET_DIR_COPY_BYTES = 32 * 1024 * 1024;

/** What every entry copied has: its path relative to the covered directory, and its owner. */
interface CopiedEntry {
  readonly path: string;
  readonly uid: number;
  readonly gid: number;
}

/** One thing copied into a cover: a directory (made empty), a regular file, or a symbolic link. */
export type SocketDirEntry =
  | (CopiedEntry & { readonly kind: "directory" | "file"; readonly mode: number })
  | (CopiedEntry & { readonly kind: "link"; readonly target: string });

/** A socket directory covered with an empty tmpfs (of `size` bytes) and filled with `entries`, parents first. */
export interface SocketDirCover extends CoverMount {
  readonly uid: number;
  readonly gid: number;
  readonly size: number;
  readonly entries: readonly SocketDirEntry[];
  /** How many entries (and files too big for what was left) were not copied. */
  readonly leftOut: number;
}

/** Which socket directories to cover. Paths are real paths. */
export interface SocketDirSearch {
  /** The agent's environment (`HOME`); the password database's home is looked at too. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The covered roots (and the runtime directory's cover): a directory under one is hidden already. */
  readonly covered: readonly string[];
  /** The paths bound back over the covered roots: a directory under one of them is reachable after all. */
  readonly kept: readonly string[];
  /**
   * What must stay what it is: the working directory, the `--writable` paths, the bridge directory, the
   * agent's program, ACP's home and its aliases. A socket directory that is or holds one is not covered.
   */
  readonly protect: readonly string[];
  /** What is hidden already or must not be covered over (the bridge directory, ACP's home, its aliases). */
  readonly inside: readonly string[];
  readonly limits?: { readonly entries: number; readonly bytes: number };
}

/** The socket directories of the home(s) to cover, in `SOCKET_HOME_DIRS` order, none inside another. */
export function planSocketDirCovers(search: SocketDirSearch): SocketDirCover[] {
  const budget = {
    entries: search.limits?.entries ?? SOCKET_DIR_COPY_ENTRIES,
    bytes: search.limits?.bytes ?? SOCKET_DIR_COPY_BYTES,
  };
  const chosen: { path: string; top: Stats }[] = [];
  for (const home of homesOf(search.env)) {
    for (const dir of SOCKET_HOME_DIRS) {
      const path = realPathOrNull(join(home, dir));
      const top = path === null || path === "/" ? null : statOrNull(path);
      if (path === null || top === null || !top.isDirectory()) continue;
      if (chosen.some((c) => isWithin(path, c.path) || isWithin(c.path, path))) continue;
      if (search.covered.some((r) => isWithin(path, r)) && !search.kept.some((k) => isWithin(path, k))) continue;
      if (search.protect.some((p) => isWithin(p, path))) continue;
      if (search.inside.some((p) => isWithin(path, p))) continue;
      chosen.push({ path, top });
    }
  }
  return chosen.map(({ path, top }) => coverOf(path, top, budget));
}

/** The line `acp run` logs when some of the socket directories' entries were not copied, if any were not. */
export function socketDirsLeftOut(covers: readonly SocketDirCover[]): string | undefined {
  const short = covers.filter((c) => c.leftOut > 0);
  if (short.length === 0) return undefined;
  const count = short.reduce((n, c) => n + c.leftOut, 0);
  const where = short.map((c) => `\`${c.path}\``).join(", ");
  return `acp run: ${count} ${count === 1 ? "entry" : "entries"} of ${where} ${count === 1 ? "is" : "are"} not in the sandbox: it covers these directories with copies of their files, at most ${SOCKET_DIR_COPY_ENTRIES.toLocaleString("en")} entries and ${SOCKET_DIR_COPY_BYTES / 1024 / 1024} MiB, ${DEEP_DEPTH} levels down (move what the agent does not need out of them)`;
}

function homesOf(env: Readonly<Record<string, string | undefined>>): string[] {
  const homes = new Set<string>();
  const envHome = env["HOME"];
  if (envHome !== undefined && isAbsolute(envHome)) homes.add(envHome);
  try {
    homes.add(userInfo().homedir);
  } catch {
    // no password entry: the environment's HOME alone
  }
  return [...homes];
}

/** Walks `root` breadth first (parents before children), taking what fits in `budget` (which it spends). */
function coverOf(root: string, top: Stats, budget: { entries: number; bytes: number }): SocketDirCover {
  const entries: SocketDirEntry[] = [];
  let leftOut = 0;
  let pages = 0;
  const queue: { rel: string; depth: number }[] = [{ rel: "", depth: 1 }];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    let names: string[];
    try {
      names = readdirSync(join(root, next.rel)).sort();
    } catch {
      continue;
    }
    for (const [index, name] of names.entries()) {
      if (budget.entries <= 0) {
        // no room for more: what is left is counted, not looked at (sockets among it)
        leftOut += names.length - index;
        break;
      }
      const rel = next.rel === "" ? name : join(next.rel, name);
      let s: Stats;
      try {
        s = lstatSync(join(root, rel));
      } catch {
        continue;
      }
      if (!s.isDirectory() && !s.isFile() && !s.isSymbolicLink()) continue; // a socket, a pipe, a device
      if (s.isFile() && s.size > budget.bytes) {
        leftOut++;
        continue;
      }
      const owner = { uid: s.uid, gid: s.gid };
      if (s.isDirectory()) {
        // its entries lie one level further: a directory at the last level is made, empty
        if (next.depth < DEEP_DEPTH) queue.push({ rel, depth: next.depth + 1 });
        else leftOut += countEntries(join(root, rel));
        entries.push({ kind: "directory", path: rel, mode: s.mode & 0o7777, ...owner });
      } else if (s.isFile()) {
        budget.bytes -= s.size;
        pages += Math.ceil(s.size / 4096);
        entries.push({ kind: "file", path: rel, mode: s.mode & 0o7777, ...owner });
      } else {
        let target: string;
        try {
          target = readlinkSync(join(root, rel));
        } catch {
          continue;
        }
        pages += 1;
        entries.push({ kind: "link", path: rel, target, ...owner });
      }
      budget.entries--;
    }
  }
  const mode = (top.mode & 0o7777).toString(8).padStart(4, "0");
  // room for each file's pages (and a long link's), and a little to spare
  const size = (pages + 256) * 4096;
  return { path: root, mode, uid: top.uid, gid: top.gid, size, entries, leftOut };
}

function countEntries(dir: string): number {
  try {
    return readdirSync(dir).length;
  } catch {
    return 0;
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
