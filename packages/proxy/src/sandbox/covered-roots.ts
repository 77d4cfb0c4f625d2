/**
 * The host's shared scratch and runtime directories, which the sandbox covers with an empty tmpfs: every
 * program on the host keeps temporary files and Unix sockets there (tmux, X11, D-Bus, ssh-agent, databases),
 * and a socket leads out of the sandbox. None of them is ever bound back whole: not as the working directory,
 * not as a `--writable` path.
 */
import { realpathSync } from "node:fs";
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
