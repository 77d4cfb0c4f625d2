/**
 * Pathname Unix sockets outside the covered directories that lead out of the sandbox: an SSH `ControlMaster`
 * socket under `~/.ssh` (runs commands on its remote host, past the network namespace and the egress allow
 * list), an ssh-agent (`SSH_AUTH_SOCK`), `gpg-agent` under `~/.gnupg`, Docker Desktop's or a rootless
 * Docker's `docker.sock` (a container with the host's `/` mounted), a D-Bus session bus or podman under
 * `$XDG_RUNTIME_DIR`. A read-only mount does not close a socket (connecting writes nothing to the file
 * system), so the init binds an empty, read-only file over each one found here: `connect()` then meets a
 * plain file and is refused.
 *
 * Looked for once, at start, in:
 * - the invoking user's home (`HOME`, and the password database's home): its socket directories
 *   (`SOCKET_HOME_DIRS`) down to `DEEP_DEPTH` levels, the rest down to `HOME_DEPTH` levels;
 * - `$XDG_RUNTIME_DIR` and `/run/user/UID`, down to `DEEP_DEPTH` levels (under `/run` they are covered whole
 *   anyway);
 * - the socket `SSH_AUTH_SOCK` names;
 * - the agent's working directory and `--writable` paths, down to `HOME_DEPTH` levels (a database's or a
 *   development server's socket in a project).
 *
 * Each walk looks at most at `HOME_SOCKET_WALK_LIMIT` entries, does not follow symbolic links, and skips what
 * it cannot read. A socket created after the start, or deeper or elsewhere, is not covered by this: the socket
 * directories themselves are covered whole (`planSocketDirCovers`), and so is the runtime directory
 * (`runtimeDirCover`), so what is left open is the rest of the home and the working directory.
 */
import { lstatSync, readdirSync, type Dirent } from "node:fs";
import { userInfo } from "node:os";
import { isAbsolute, join } from "node:path";
import { isWithin, realPathOrNull } from "./paths.js";

/** Directories of a home that programs keep their sockets in, walked deeper than the rest of the home. */
export const SOCKET_HOME_DIRS: readonly string[] = [
  ".ssh",
  ".gnupg",
  ".docker",
  ".colima",
  ".lima",
  ".rd",
  ".orbstack",
  ".local/share/containers",
  ".local/share/docker",
  ".config/containers",
];

/** How deep the walk goes in the home as a whole (the home's entries are depth 1). */
export const HOME_DEPTH = 3;
/** How deep it goes in the socket directories and the runtime directory. */
export const DEEP_DEPTH = 6;
/** The most entries one walk looks at. */
export const HOME_SOCKET_WALK_LIMIT = 20_000;

/** Where to look: the environment the agent's is derived from (`HOME`, `XDG_RUNTIME_DIR`, `SSH_AUTH_SOCK`). */
export interface SocketSearch {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Real paths under which nothing is looked for (ACP's home, the bridge directory, the covered roots). */
  readonly skip: readonly string[];
  /** The agent's working directory and `--writable` paths: walked like the home (down to `HOME_DEPTH`). */
  readonly given?: readonly string[];
  readonly limit?: number;
}

/** The real paths of the Unix sockets found, sorted, without duplicates. */
export function findUserSockets(search: SocketSearch): string[] {
  const limit = search.limit ?? HOME_SOCKET_WALK_LIMIT;
  const found = new Set<string>();
  const skipped = (p: string): boolean => search.skip.some((s) => isWithin(p, s));
  const walk = (start: string | undefined, depth: number): void => {
    if (start === undefined || !isAbsolute(start)) return;
    const root = realPathOrNull(start);
    if (root === null || root === "/" || skipped(root)) return;
    let seen = 0;
    const queue: { dir: string; depth: number }[] = [{ dir: root, depth: 1 }];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      let entries: Dirent[];
      try {
        entries = readdirSync(next.dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        if (++seen > limit) return;
        const path = join(next.dir, entry.name);
        if (skipped(path)) continue;
        let socket = entry.isSocket();
        let directory = entry.isDirectory();
        if (!socket && !directory && !entry.isFile() && !entry.isSymbolicLink()) {
          try {
            const s = lstatSync(path);
            socket = s.isSocket();
            directory = s.isDirectory();
          } catch {
            continue;
          }
        }
        if (socket) found.add(path);
        else if (directory && next.depth < depth) queue.push({ dir: path, depth: next.depth + 1 });
      }
    }
  };
  const homes = new Set<string>();
  const envHome = search.env["HOME"];
  if (envHome !== undefined && envHome !== "") homes.add(envHome);
  try {
    homes.add(userInfo().homedir);
  } catch {
    // no password entry: the environment's HOME alone
  }
  for (const home of homes) {
    for (const dir of SOCKET_HOME_DIRS) walk(join(home, dir), DEEP_DEPTH);
    walk(home, HOME_DEPTH);
  }
  for (const path of search.given ?? []) walk(path, HOME_DEPTH);
  walk(search.env["XDG_RUNTIME_DIR"], DEEP_DEPTH);
  const uid = process.getuid?.();
  if (uid !== undefined) walk(`/run/user/${uid}`, DEEP_DEPTH);
  const agentSocket = search.env["SSH_AUTH_SOCK"];
  if (agentSocket !== undefined && isAbsolute(agentSocket)) {
    const real = realPathOrNull(agentSocket);
    if (real !== null && !skipped(real) && isSocket(real)) found.add(real);
  }
  return [...found].sort();
}

function isSocket(path: string): boolean {
  try {
    return lstatSync(path).isSocket();
  } catch {
    return false;
  }
}
