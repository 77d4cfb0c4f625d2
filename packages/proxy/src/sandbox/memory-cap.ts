/**
 * The cap on the sandbox's memory (`acp run --max-memory`): without one, what the agent allocates it takes
 * from the whole host, ACP itself (its audit trail, its consent broker) included, until the kernel's OOM
 * killer picks a victim anywhere. A memory cgroup of its own, made next to acp's own and removed after the
 * run; the init moves itself into it before it starts the agent, so everything in the sandbox counts (its
 * tmpfs covers too). Past the cap the kernel reclaims what it can, then kills a process of the sandbox (the
 * largest: the agent's, as a rule); the count of those kills is read back after the run.
 *
 * - cgroup v2: `memory.max` (and `memory.swap.max` 0 where swap is accounted). A process is in one v2 cgroup
 *   only, so when the process cap is a v2 cgroup the memory cap must be that same cgroup; when that one has no
 *   `memory.max` (the parent does not hand the controller down), there is no memory cap.
 * - cgroup v1: `memory.limit_in_bytes` in the `memory` hierarchy (and `memory.memsw.limit_in_bytes`, memory
 *   plus swap, where swap is accounted).
 *
 * Unprivileged, neither is usually writable: then there is no cap (a warning, or a refusal when one was asked
 * for).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { unavailable } from "./errors.js";
import { eventCount, makeCgroup, removeCgroup, writeCap } from "./cgroups.js";

/** Bytes the sandbox may use unless `--max-memory` says otherwise: 4 GiB. */
export const DEFAULT_MAX_MEMORY = 4 * 1024 ** 3;
/** The smallest cap accepted: the init (Node) needs some of it. */
export const MIN_MAX_MEMORY = 32 * 1024 ** 2;

/** How the memory cap is applied inside the sandbox (passed to the init). */
export interface MemoryCap {
  readonly kind: "cgroup";
  /** The cgroup the init enters (the process cap's own, on v2, when it is a cgroup). */
  readonly path: string;
  readonly max: number;
}

/** A memory cgroup made (or a v2 process cgroup capped) for one run. */
export interface MemoryCgroup {
  readonly path: string;
  /** How many processes the kernel killed for reaching the cap. */
  oomKills(): number;
  /** Removes the cgroup once its processes are gone (nothing when it is the process cap's). */
  remove(): Promise<void>;
}

/**
 * Caps the memory at `max` bytes: in `pidsCgroup` (the process cap's cgroup) when that is a v2 one, else in
 * a memory cgroup of its own. Null when no cap can be applied here.
 */
export function createMemoryCgroup(max: number, pidsCgroup: string | null): MemoryCgroup | null {
  if (pidsCgroup !== null && existsSync(join(pidsCgroup, "cgroup.controllers"))) {
    // v2: the same cgroup, or none (a second v2 cgroup would take the init out of the process cap's)
    return capV2(pidsCgroup, max) ? handle(pidsCgroup, "memory.events", () => Promise.resolve()) : null;
  }
  let v2 = false;
  const path = makeCgroup("memory", (dir) => {
    v2 = existsSync(join(dir, "cgroup.controllers"));
    return v2 ? capV2(dir, max) : capV1(dir, max);
  });
  return path === null ? null : handle(path, v2 ? "memory.events" : "memory.oom_control", () => removeCgroup(path));
}

const capV2 = (path: string, max: number): boolean =>
  writeCap(path, "memory.max", String(max), ["memory.swap.max", "0"]);
const capV1 = (path: string, max: number): boolean =>
  writeCap(path, "memory.limit_in_bytes", String(max), ["memory.memsw.limit_in_bytes", String(max)]);

function handle(path: string, events: string, remove: () => Promise<void>): MemoryCgroup {
  return {
    path,
    oomKills: () => eventCount(path, events, "oom_kill"),
    remove,
  };
}

/**
 * A size as `--max-memory` takes it: bytes, or a whole number with `K`, `M`, `G` or `T` (powers of 1024;
 * `KiB`, `MB`… too). Undefined when it is not one.
 */
export function parseMemorySize(text: string): number | undefined {
  const m = /^(\d+)\s*([KMGT]?)(?:i?B)?$/i.exec(text.trim());
  if (m === null) return undefined;
  const unit = { "": 0, K: 1, M: 2, G: 3, T: 4 }[(m[2] ?? "").toUpperCase() as "" | "K" | "M" | "G" | "T"];
  const value = Number(m[1]) * 1024 ** unit;
  return Number.isSafeInteger(value) ? value : undefined;
}

/** `bytes` for people: `64 MiB`, `4 GiB`, else bytes. */
export function formatMemorySize(bytes: number): string {
  for (const [unit, size] of [
    ["TiB", 1024 ** 4],
    ["GiB", 1024 ** 3],
    ["MiB", 1024 ** 2],
    ["KiB", 1024],
  ] as const) {
    if (bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

/**
 * How the sandbox's memory is capped here: a memory cgroup when one can be made (`createMemoryCgroup`).
 * Neither: refused (`sandbox_unavailable`) when a cap was asked for, a warning for the default.
 */
export function capMemory(
  requested: number | undefined,
  pidsCgroup: string | null,
  log: (line: string) => void,
  cleanup: (() => Promise<void> | void)[],
): { cap: MemoryCap | null; cgroup: MemoryCgroup | null } {
  const max = requested ?? DEFAULT_MAX_MEMORY;
  const cgroup = createMemoryCgroup(max, pidsCgroup);
  if (cgroup !== null) {
    cleanup.push(() => cgroup.remove());
    return { cap: { kind: "cgroup", path: cgroup.path, max }, cgroup };
  }
  const why = "no memory cgroup can be made here (cgroup v2's memory.max or v1's memory.limit_in_bytes)";
  if (requested !== undefined) {
    throw unavailable(
      `cannot cap the agent's memory at ${formatMemorySize(max)}: ${why}`,
      "mount the memory cgroup controller writable for acp (with cgroup v2, delegate it to acp's cgroup), or leave --max-memory out to run uncapped (with a warning)",
    );
  }
  log(`acp run: the agent's memory has no cap: ${why}; what it allocates, it takes from the whole host`);
  return { cap: null, cgroup: null };
}
