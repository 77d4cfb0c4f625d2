/**
 * ACP's home reached by another path. The sandbox covers the home where it lies (an empty, read-only tmpfs at
 * its real path), but the same directory can be reachable elsewhere through a bind mount the host already has:
 * `/srv/data` bound at `/mnt/data` shows the home `/srv/data/acp` at `/mnt/data/acp` too, and a bind of the
 * home's `keys/` (or its `state.db`) somewhere shows that part of it. Inside the sandbox the whole host is
 * readable, so the agent would read the keys and the vault there, and write the policy and the audit trail
 * when the other path lies in its working directory or a `--writable` path.
 *
 * So the mounts of the file system that holds the home are looked at (`/proc/self/mountinfo`: each mount's
 * device, the directory of that file system it shows, and where): every one that shows the home, or a part of
 * it, at another path names an alias, which the init covers like the home. Each alias is confirmed by device
 * and inode (the path found must be the very directory or file of the home), so a path that is hidden by a
 * later mount, or that is not the home after all, is not one.
 */
import { openSync, closeSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { isWithin } from "./paths.js";

/** One line of `/proc/self/mountinfo`: its id, the file system (`major:minor`), what it shows, and where. */
export interface MountEntry {
  readonly id: number;
  readonly device: string;
  readonly root: string;
  readonly path: string;
}

/** Where the home, or a part of it, is reachable besides its own path: `path` shows `of` (in the home). */
export interface HomeAlias {
  readonly path: string;
  readonly of: string;
}

/** The mounts `text` (the contents of `/proc/self/mountinfo`) lists, paths unescaped. */
export function parseMountInfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split("\n")) {
    const f = line.split(" ");
    if (f.length < 5) continue;
    out.push({ id: Number(f[0]), device: f[2] ?? "", root: unescape(f[3] ?? ""), path: unescape(f[4] ?? "") });
  }
  return out;
}

/**
 * The aliases of `home` (a real path, on the mount `homeMount`) among `mounts`: each mount of the same file
 * system that shows the home's directory (it is then at the matching path under that mount) or a directory
 * or file inside the home (the mount point itself shows it), and that `sameFile` confirms. Paths inside the
 * home, the home itself and paths inside another alias (covered with it) are left out.
 */
export function homeAliasesIn(
  home: string,
  homeMount: number,
  mounts: readonly MountEntry[],
  sameFile: (a: string, b: string) => boolean,
): HomeAlias[] {
  const held = mounts.find((m) => m.id === homeMount);
  if (held === undefined || !isWithin(home, held.path)) return [];
  const inFs = join(held.root, relative(held.path, home));
  const found: HomeAlias[] = [];
  for (const m of mounts) {
    if (m.device !== held.device) continue;
    let alias: HomeAlias;
    if (isWithin(inFs, m.root)) alias = { path: join(m.path, relative(m.root, inFs)), of: home };
    else if (isWithin(m.root, inFs)) alias = { path: m.path, of: join(home, relative(inFs, m.root)) };
    else continue;
    if (isWithin(alias.path, home) || found.some((a) => a.path === alias.path)) continue;
    if (sameFile(alias.path, alias.of)) found.push(alias);
  }
  return found.filter((a) => !found.some((b) => b !== a && isWithin(a.path, b.path)));
}

/**
 * The aliases of `home` (a real path) on this host, as this process's mount namespace has them; undefined
 * when the mount table, or the mount the home is on, cannot be read (the caller refuses: fail closed).
 */
export function findHomeAliases(home: string): HomeAlias[] | undefined {
  let text: string;
  try {
    text = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return undefined;
  }
  const mount = mountIdOf(home);
  const mounts = parseMountInfo(text);
  if (mount === undefined || !mounts.some((m) => m.id === mount)) return undefined;
  return homeAliasesIn(home, mount, mounts, sameFile);
}

/**
 * Whether `path` (already resolved) is ACP's `home` (already resolved) or lies in it: by path, inside one of
 * the home's `aliases` (by default those of this host: `findHomeAliases`), or below a directory that is the
 * home by device and inode. A home that cannot be examined counts by path only.
 */
export function isInHome(
  path: string,
  home: string,
  aliases: readonly HomeAlias[] = findHomeAliases(home) ?? [],
): boolean {
  if (isWithin(path, home) || aliases.some((a) => isWithin(path, a.path))) return true;
  for (let p = path; ; p = dirname(p)) {
    if (sameFile(p, home)) return true;
    if (dirname(p) === p) return false;
  }
}

/** Whether `a` and `b` are the same file (device and inode, symbolic links followed). */
export function sameFile(a: string, b: string): boolean {
  try {
    const x = statSync(a, { bigint: true });
    const y = statSync(b, { bigint: true });
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

const O_PATH = 0o10000000; // Linux's value (x86, arm, riscv); node:fs does not export it

/** The id of the mount `path` is on (`mnt_id` of an `O_PATH` descriptor), when it can be read. */
function mountIdOf(path: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, O_PATH);
  } catch {
    return undefined;
  }
  try {
    const m = /^mnt_id:\s*(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"));
    return m?.[1] !== undefined ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** mountinfo's octal escapes (`\040` for a space) undone. */
function unescape(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}
