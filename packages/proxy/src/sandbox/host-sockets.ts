/**
 * Whether a tree under a covered directory (`/tmp`, `/var/tmp`, `/dev/shm`) may be bound back into the
 * sandbox: not when it holds a way out. A Unix socket there (tmux's, the X server's, an ssh-agent's, a
 * database's, an editor server's) is a door to a program outside that takes commands, and a read-only mount
 * does not close it (connecting to a socket writes nothing to the file system); a named pipe (FIFO) is one
 * too, and a device node is the host's hardware. Neither is an agent's file. So a tree is refused when:
 *
 * - its entry right under the covered directory (itself, or the directory it lies in) is named like a
 *   directory programs keep their sockets in (`SOCKET_DIR_NAMES`), even while it is empty: the socket comes
 *   when the program starts (tmux's `/tmp/tmux-UID/default`, an ssh-agent's `/tmp/ssh-XXXX/agent.N`),
 *   perhaps after the agent did. Only there: programs make these directories right under `/tmp`, and deeper
 *   down the same names are an agent's own (`src/screen`, `ssh-client`);
 * - it is, or holds, a socket, a FIFO or a device node, looked for in a bounded walk (at most
 *   `SOCKET_WALK_LIMIT` entries; a bigger tree, or one with a directory that cannot be read, is refused: what
 *   was not looked at may be a socket).
 *
 * Symbolic links are not followed: inside the sandbox they resolve in the sandbox's view, where the covered
 * directories are empty.
 */
import { lstatSync, readdirSync, type Dirent, type Stats } from "node:fs";
import { join, relative, sep } from "node:path";

/** Names (of a directory or a socket) that programs keep their Unix sockets under. */
export const SOCKET_DIR_NAMES: readonly RegExp[] = [
  /^\.(X11|ICE|XIM|font|Test)-unix$/, // the X server, session manager, input methods, font server
  /^tmux-\d+$/, // tmux's server socket (tmux-UID/default): `tmux run-shell` runs anything outside
  /^ssh-[A-Za-z0-9]+$/, // ssh-agent's socket directory (ssh-XXXXXXXXXX/agent.PID)
  /^emacs\d+$/, // the Emacs server (emacsUID/server): emacsclient --eval runs anything outside
  /^\.?screens?$/, // GNU screen's socket directory
  /^uscreens$/, // screen's per-user directories
  /^dbus-[A-Za-z0-9]+$/, // a D-Bus bus started outside systemd
  /^pulse-/, // PulseAudio
  /^systemd-private-/, // a service's private /tmp (its sockets among its files)
  /^\.s\.PGSQL\.\d+/, // PostgreSQL's socket and its lock file
  /^(mysql|mysqlx)\.sock/, // MySQL
  /^vscode-(ipc|git)-/, // VS Code's IPC sockets (its CLI opens any file, runs any task)
  /^\.com\.google\.Chrome\.|^\.org\.chromium\.Chromium\./, // a browser's singleton socket
];

/** The most entries the walk looks at before it refuses the tree. */
export const SOCKET_WALK_LIMIT = 100_000;

/** Why a tree is refused: the path that is the way out, and what it is. */
export interface HostChannel {
  readonly path: string;
  readonly what: string;
}

/**
 * The first way out of the sandbox in `tree` (a real path under the covered directory `root`), or undefined
 * when there is none.
 */
export function findHostChannel(tree: string, root: string, limit = SOCKET_WALK_LIMIT): HostChannel | undefined {
  const named = socketDirOnPath(tree, root);
  if (named !== undefined) return named;
  let top: Stats;
  try {
    top = lstatSync(tree);
  } catch (err) {
    return { path: tree, what: `cannot be examined (${code(err)})` };
  }
  const kind = specialKind(top);
  if (kind !== undefined) return { path: tree, what: kind };
  if (!top.isDirectory()) return undefined;
  const queue = [tree];
  let seen = 0;
  for (let dir = queue.shift(); dir !== undefined; dir = queue.shift()) {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      return { path: dir, what: `is a directory that cannot be read (${code(err)}), so it may hold a socket` };
    }
    for (const entry of entries) {
      if (++seen > limit) {
        return { path: tree, what: `holds more than ${limit} entries, too many to check that none is a socket` };
      }
      const path = join(dir, entry.name);
      let stats: Stats | Dirent = entry;
      if (!knownType(entry)) {
        // the file system did not say (DT_UNKNOWN): ask it
        try {
          stats = lstatSync(path);
        } catch (err) {
          return { path, what: `cannot be examined (${code(err)})` };
        }
      }
      const special = specialKind(stats);
      if (special !== undefined) return { path, what: special };
      if (stats.isDirectory()) queue.push(path);
    }
  }
  return undefined;
}

const SOCKET_DIR = "is where programs keep their Unix sockets";

function isSocketDirName(name: string): boolean {
  return SOCKET_DIR_NAMES.some((re) => re.test(name));
}

/** The entry of `tree` right under `root`, when it is named like a socket directory. */
function socketDirOnPath(tree: string, root: string): HostChannel | undefined {
  const rel = relative(root, tree);
  if (rel === "" || rel.startsWith("..")) return undefined;
  const top = rel.split(sep)[0] ?? "";
  return isSocketDirName(top) ? { path: join(root, top), what: SOCKET_DIR } : undefined;
}

function knownType(e: Dirent): boolean {
  return (
    e.isFile() ||
    e.isDirectory() ||
    e.isSymbolicLink() ||
    e.isSocket() ||
    e.isFIFO() ||
    e.isBlockDevice() ||
    e.isCharacterDevice()
  );
}

function specialKind(s: Stats | Dirent): string | undefined {
  if (s.isSocket()) return "is a Unix socket";
  if (s.isFIFO()) return "is a named pipe (FIFO)";
  if (s.isBlockDevice() || s.isCharacterDevice()) return "is a device node";
  return undefined;
}

function code(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? "error";
}
