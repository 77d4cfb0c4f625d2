/**
 * The cap on the agent's processes (`acp run --max-processes`): a fork bomb inside the sandbox would
 * otherwise fill the host's process table. Two ways, picked by what works here:
 *
 * - a pids cgroup of its own (`pids.max`), made next to acp's own and removed after the run; the init moves
 *   itself into it before it starts the agent, so everything in the sandbox counts (threads too). This is the
 *   only way when acp runs as root: the kernel never applies RLIMIT_NPROC to uid 0 of the host (under `netns`
 *   the agent is uid 0; under `userns` started by root, uid 0 inside is uid 0 outside), capabilities dropped or
 *   not.
 * - RLIMIT_NPROC (`prlimit --nproc`) on the agent, when acp is not root: under `userns` the agent is uid 0 of
 *   a user namespace of its own, and the kernel counts the processes (and threads) of that uid in that
 *   namespace, so the cap counts the sandbox's and nothing else of the user's. The agent cannot raise it (that
 *   takes CAP_SYS_RESOURCE outside the namespace).
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative } from "node:path";
import { randomBytes } from "node:crypto";

/** Processes (and threads) the sandbox may hold at once unless `--max-processes` says otherwise. */
export const DEFAULT_MAX_PROCESSES = 4096;

/** How the cap is applied inside the sandbox (passed to the init). */
export type ProcessCap =
  | { readonly kind: "cgroup"; readonly path: string; readonly max: number }
  | { readonly kind: "rlimit"; readonly prlimit: string; readonly max: number };

/** A pids cgroup made for one run. */
export interface PidsCgroup {
  readonly path: string;
  /** How many times a fork was refused because the cap was reached. */
  refusals(): number;
  /** Removes the cgroup once its processes are gone (retries a little while they exit). */
  remove(): Promise<void>;
}

/** `/proc/self/mountinfo` lines: mount point, root within the filesystem, type, super options. */
function cgroupMounts(): { point: string; root: string; type: string; options: string[] }[] {
  let text: string;
  try {
    text = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return [];
  }
  const unescape = (s: string): string =>
    s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return text
    .trim()
    .split("\n")
    .map((line) => {
      const [before = "", after = ""] = line.split(" - ");
      const f = before.split(" ");
      const a = after.split(" ");
      return {
        point: unescape(f[4] ?? ""),
        root: unescape(f[3] ?? ""),
        type: a[0] ?? "",
        options: (a[2] ?? "").split(","),
      };
    })
    .filter((m) => m.type === "cgroup" || m.type === "cgroup2");
}

/**
 * The cgroup directories a run's cgroup for `controller` (`pids`, `memory`) may be made in, in order: acp's own
 * in the v1 hierarchy of that controller,
 * then acp's own in the unified (v2) one and each of its ancestors up to the mount. On v2 a child has
 * `pids.max` only when its parent hands the controller down, which a cgroup holding processes (acp's own,
 * usually) cannot: systemd's slices above it (`user-0.slice`) do.
 */
export function cgroupDirs(controller: "pids" | "memory" = "pids"): string[] {
  let own: string;
  try {
    own = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return [];
  }
  const lines = own
    .trim()
    .split("\n")
    .map((l) => {
      const [, controllers = "", ...path] = l.split(":");
      return { controllers: controllers.split(","), path: path.join(":") };
    });
  const mounts = cgroupMounts();
  const dirs: string[] = [];
  const place = (
    mount: { point: string; root: string } | undefined,
    path: string | undefined,
    ancestors: boolean,
  ): void => {
    if (mount === undefined || path === undefined) return;
    const rel = relative(mount.root, path);
    if (rel.startsWith("..") || isAbsolute(rel)) return;
    let dir = join(mount.point, rel);
    dirs.push(dir);
    while (ancestors && dir !== mount.point && dirname(dir) !== dir) {
      dir = dirname(dir);
      dirs.push(dir);
    }
  };
  place(
    mounts.find((m) => m.type === "cgroup" && m.options.includes(controller)),
    lines.find((l) => l.controllers.includes(controller))?.path,
    false,
  );
  place(
    mounts.find((m) => m.type === "cgroup2"),
    lines.find((l) => l.controllers.length === 1 && l.controllers[0] === "")?.path,
    true,
  );
  return dirs;
}

/**
 * Removes the empty cgroups earlier runs left in `parent` when their `acp` was killed before it could
 * (`acp-run-PID-…` whose PID is gone). One still holding a process is never removed (the kernel refuses).
 */
export function removeLeftovers(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^acp-run-(\d+)-[0-9a-f]+$/.exec(name)?.[1];
    if (pid === undefined || alive(Number(pid))) continue;
    try {
      rmdirSync(join(parent, name));
    } catch {
      // still in use, or not ours to remove
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Makes a pids cgroup capped at `max` (`cgroupDirs`), or returns null when none can be made here. */
export function createPidsCgroup(max: number): PidsCgroup | null {
  for (const parent of cgroupDirs()) {
    removeLeftovers(parent);
    const path = join(parent, `acp-run-${process.pid}-${randomBytes(4).toString("hex")}`);
    try {
      mkdirSync(path);
    } catch {
      continue;
    }
    try {
      // a v2 child has pids.max only when the parent hands the controller down
      writeFileSync(join(path, "pids.max"), String(max));
    } catch {
      try {
        rmdirSync(path);
      } catch {
        // left empty; nothing runs in it
      }
      continue;
    }
    return { path, refusals: () => eventCount(path, "pids.events", "max"), remove: () => removeCgroup(path) };
  }
  return null;
}

/** The count a cgroup's events file gives under `key` (`max` in pids.events, `oom_kill` in memory.events); 0 unread. */
export function eventCount(path: string, file: string, key: string): number {
  try {
    const line = readFileSync(join(path, file), "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${key} `) || l.startsWith(`${key}\t`));
    return Number(line?.slice(key.length).trim() ?? 0) || 0;
  } catch {
    return 0;
  }
}

/** Removes a cgroup made for a run once its last process is gone (the kernel frees it a moment later). */
export async function removeCgroup(path: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      rmdirSync(path);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      await new Promise((resolve) => setTimeout(resolve, 100).unref());
    }
  }
}
