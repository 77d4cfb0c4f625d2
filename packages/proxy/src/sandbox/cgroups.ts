/**
 * What the sandbox's caps (`process-cap.ts`, `memory-cap.ts`, `cpu-cap.ts`) share: where a run's cgroup for a
 * controller may be made (`cgroupDirs`), making one and writing its limit (`makeCgroup`, `writeCap`), reading
 * an event count back (`eventCount`), and removing it after the run (`removeCgroup`), or after an `acp`
 * killed before it could (`removeLeftovers`). Each run's cgroup is named `acp-run-PID-…`.
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative } from "node:path";
import { randomBytes } from "node:crypto";

/** The cgroup controllers the sandbox caps with. */
export type CapController = "pids" | "memory" | "cpu";

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
 * The cgroup directories a run's cgroup for `controller` (`pids`, `memory`, `cpu`) may be made in, in order: acp's own
 * in the v1 hierarchy of that controller,
 * then acp's own in the unified (v2) one and each of its ancestors up to the mount. On v2 a child has
 * `pids.max` only when its parent hands the controller down, which a cgroup holding processes (acp's own,
 * usually) cannot: systemd's slices above it (`user-0.slice`) do.
 */
export function cgroupDirs(controller: CapController): string[] {
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

/**
 * Makes a run's cgroup for `controller` in the first of `cgroupDirs` where one can be made and `apply` (its
 * limit) succeeds; an empty one where `apply` fails is removed again. The path, or null when none works here.
 */
export function makeCgroup(controller: CapController, apply: (path: string) => boolean): string | null {
  for (const parent of cgroupDirs(controller)) {
    removeLeftovers(parent);
    const path = join(parent, `acp-run-${process.pid}-${randomBytes(4).toString("hex")}`);
    try {
      mkdirSync(path);
    } catch {
      continue;
    }
    if (apply(path)) return path;
    try {
      rmdirSync(path);
    } catch {
      // left empty; nothing runs in it
    }
  }
  return null;
}

/**
 * Writes a cgroup's limit `file` (false when it cannot be: no such controller there, or not writable), then,
 * where given, a second, optional one (e.g. the swap limit, where swap is accounted).
 */
export function writeCap(path: string, file: string, value: string, optional?: readonly [string, string]): boolean {
  try {
    writeFileSync(join(path, file), value);
  } catch {
    return false;
  }
  if (optional !== undefined) {
    try {
      writeFileSync(join(path, optional[0]), optional[1]);
    } catch {
      // not there (swap not accounted, or none): the limit alone
    }
  }
  return true;
}
