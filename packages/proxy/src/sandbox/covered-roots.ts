/**
 * The host's shared scratch and runtime directories, which the sandbox covers with an empty tmpfs: every
 * program on the host keeps temporary files and Unix sockets there (tmux, X11, D-Bus, ssh-agent, databases),
 * and a socket leads out of the sandbox. None of them is ever bound back whole: not as the working directory,
 * not as a `--writable` path.
 */
import { realpathSync, statSync } from "node:fs";
import type { CoverMount } from "./init-source.js";

/** Directories covered with an empty tmpfs, in this order (after the stage root). */
export const COVERED_ROOTS: readonly CoverMount[] = [
  { path: "/run", mode: "0755" },
  { path: "/tmp", mode: "1777" },
  { path: "/var/tmp", mode: "1777" },
  { path: "/dev/shm", mode: "1777" },
];

/** The covered root that `realPath` (already resolved) is itself, if any: `/tmp`, `/run`, … (`/var/run` is `/run`). */
export function coveredRootAt(realPath: string): string | undefined {
  for (const root of COVERED_ROOTS) {
    let real: string;
    try {
      real = realpathSync(root.path);
    } catch {
      continue;
    }
    if (real === realPath && real !== "/") return root.path;
  }
  return undefined;
}

/**
 * Whether `realPath` (already resolved) lies inside the host's runtime directory `/run` (`/var/run`): nothing
 * there is anyone's working directory, and its directories are sockets that lead out of the sandbox — a
 * person's `/run/user/UID` holds their D-Bus session bus (whose systemd runs any command outside it),
 * ssh-agent, gpg-agent and the display server. Such a directory stays covered, whichever part of it is named.
 */
export function isInRuntimeDir(realPath: string): boolean {
  let run: string;
  try {
    run = realpathSync("/run");
  } catch {
    return false;
  }
  return run !== "/" && realPath.startsWith(`${run}/`);
}

/**
 * The covered root (its real path) that `realPath` (already resolved) lies strictly inside, if any:
 * `/tmp` for `/tmp/agent/main.js`. Undefined for a covered root itself and for paths outside them.
 */
export function coveredRootAbove(realPath: string): string | undefined {
  for (const root of COVERED_ROOTS) {
    let real: string;
    try {
      real = realpathSync(root.path);
    } catch {
      continue;
    }
    if (real !== "/" && realPath.startsWith(`${real}/`)) return real;
  }
  return undefined;
}

/**
 * `$XDG_RUNTIME_DIR` when it lies outside the covered roots (under `/run`, `/run/user/UID` is covered with
 * `/run`): by its specification it holds the user's sockets and runtime files only (a D-Bus session bus, an
 * ssh-agent, gpg-agent, a rootless Docker or podman, Wayland), and a program started after the sandbox puts
 * its socket there, where the start-up search cannot have seen it. So it is covered whole with an empty tmpfs
 * (`0700`) of the agent's own, like `/run`, also when it lies in one of `writable` (the working directory, the
 * `--writable` paths: `XDG_RUNTIME_DIR=/srv/project/.run` with the agent in `/srv/project`). Not when it is
 * `/`, holds a covered root, lies under one, is or holds one of `writable`, or holds or lies in one of
 * `protect` (the bridge directory, the agent's program, ACP's home): those must stay what they are, and the
 * start-up search covers the sockets found there. `roots` are the covered roots' real paths.
 */
export function runtimeDirCover(
  runtimeDir: string | undefined,
  roots: readonly string[],
  protect: readonly string[],
  writable: readonly string[] = [],
): CoverMount | undefined {
  if (runtimeDir === undefined || !runtimeDir.startsWith("/")) return undefined;
  let path: string;
  try {
    path = realpathSync(runtimeDir);
    if (!statSync(path).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  const within = (p: string, dir: string): boolean => p === dir || p.startsWith(dir === "/" ? "/" : `${dir}/`);
  if (path === "/") return undefined;
  if (roots.some((r) => within(path, r) || within(r, path))) return undefined;
  if (protect.some((p) => within(p, path) || within(path, p))) return undefined;
  if (writable.some((w) => within(w, path))) return undefined;
  return { path, mode: "0700" };
}
