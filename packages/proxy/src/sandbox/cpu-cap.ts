/**
 * The cap on the sandbox's CPU time (`acp run --max-cpu`): a number of CPUs (`1.5`), the share of each
 * scheduling period (100 ms) the sandbox's processes may run for, summed over them. A CPU cgroup of its own,
 * made like the memory cap's and removed after the run; the init moves itself into it before it starts the
 * agent, so everything in the sandbox counts. Past the quota the kernel holds the sandbox's processes back
 * until the next period (throttling: they run slower, nothing is killed); how many periods that happened in
 * is read back after the run.
 *
 * - cgroup v2: `cpu.max` (`QUOTA PERIOD`, in microseconds). A process is in one v2 cgroup only, so when the
 *   process or memory cap is a v2 cgroup the CPU cap must be that same cgroup; when that one has no `cpu.max`
 *   (the parent does not hand the controller down), there is no CPU cap.
 * - cgroup v1: `cpu.cfs_period_us` and `cpu.cfs_quota_us` in the `cpu` hierarchy.
 *
 * No cap unless one is asked for (`--max-cpu` or `sandbox.max_cpu`): CPU time is shared by the scheduler,
 * not used up, so an agent that keeps every core busy slows the host but takes nothing from it the host
 * does not get back (unlike memory or the process table, which have caps by default); and a default below
 * the machine's cores would slow the builds and tests that are the agent's work, while one at the machine's
 * cores caps nothing. A cap asked for that cannot be applied here is refused.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { unavailable } from "./errors.js";
import { eventCount, makeCgroup, removeCgroup, writeCap } from "./cgroups.js";

/** The scheduling period the quota is a share of, in microseconds (the kernel's default: 100 ms). */
export const CPU_PERIOD_US = 100_000;
/** The smallest cap accepted, in CPUs: a quota of 1 ms per period, the kernel's least. */
export const MIN_MAX_CPU = 0.01;
/** The largest cap accepted, in CPUs (beyond any machine's count, and a quota the kernel takes). */
export const MAX_MAX_CPU = 4096;

/** How the CPU cap is applied inside the sandbox (passed to the init). */
export interface CpuCap {
  readonly kind: "cgroup";
  /** The cgroup the init enters (the process or memory cap's own, on v2, when that is a v2 cgroup). */
  readonly path: string;
  /** The cap in CPUs, as given. */
  readonly cpus: number;
}

/** A CPU cgroup made (or a v2 cgroup of another cap capped) for one run. */
export interface CpuCgroup {
  readonly path: string;
  /** In how many scheduling periods the kernel held the sandbox back for reaching its quota. */
  throttled(): number;
  /** Removes the cgroup once its processes are gone (nothing when it is another cap's). */
  remove(): Promise<void>;
}

/** The quota per `CPU_PERIOD_US` for `cpus` CPUs, in whole microseconds. */
export function cpuQuota(cpus: number): number {
  return Math.round(cpus * CPU_PERIOD_US);
}

/**
 * Caps the CPU time at `cpus` CPUs: in the first of `joined` (the run's other cgroups) that is a v2 one, else in
 * a CPU cgroup of its own. Null when no cap can be applied here.
 */
export function createCpuCgroup(cpus: number, joined: readonly string[]): CpuCgroup | null {
  const quota = cpuQuota(cpus);
  const shared = joined.find((path) => existsSync(join(path, "cgroup.controllers")));
  if (shared !== undefined) {
    // v2: the same cgroup, or none (a second v2 cgroup would take the init out of the other cap's)
    return capV2(shared, quota) ? handle(shared, () => Promise.resolve()) : null;
  }
  const path = makeCgroup("cpu", (dir) =>
    existsSync(join(dir, "cgroup.controllers")) ? capV2(dir, quota) : capV1(dir, quota),
  );
  return path === null ? null : handle(path, () => removeCgroup(path));
}

const capV2 = (path: string, quota: number): boolean => writeCap(path, "cpu.max", `${quota} ${CPU_PERIOD_US}`);
// the period first (a quota is checked against it), then the quota
const capV1 = (path: string, quota: number): boolean =>
  writeCap(path, "cpu.cfs_period_us", String(CPU_PERIOD_US)) && writeCap(path, "cpu.cfs_quota_us", String(quota));

function handle(path: string, remove: () => Promise<void>): CpuCgroup {
  return { path, throttled: () => eventCount(path, "cpu.stat", "nr_throttled"), remove };
}

/**
 * A number of CPUs as `--max-cpu` takes it: a decimal number (`2`, `1.5`, `0.25`) from `MIN_MAX_CPU` to
 * `MAX_MAX_CPU`. Undefined when it is not one.
 */
export function parseCpuCount(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(?:\d+(?:\.\d*)?|\.\d+)$/.test(trimmed)) return undefined;
  const cpus = Number(trimmed);
  return isCpuCount(cpus) ? cpus : undefined;
}

/** Whether `cpus` is a cap `createCpuCgroup` takes: a finite number from `MIN_MAX_CPU` to `MAX_MAX_CPU`. */
export function isCpuCount(cpus: number): boolean {
  return Number.isFinite(cpus) && cpus >= MIN_MAX_CPU && cpus <= MAX_MAX_CPU;
}

/** `cpus` for people: `1 CPU`, `0.2 CPUs`. */
export function formatCpuCount(cpus: number): string {
  return `${cpus} CPU${cpus === 1 ? "" : "s"}`;
}

/**
 * How the sandbox's CPU time is capped here: nothing when no cap was asked for, else a CPU cgroup
 * (`createCpuCgroup`); when none can be made, refused (`sandbox_unavailable`).
 */
export function capCpu(
  requested: number | undefined,
  joined: readonly string[],
  cleanup: (() => Promise<void> | void)[],
): { cap: CpuCap | null; cgroup: CpuCgroup | null } {
  if (requested === undefined) return { cap: null, cgroup: null };
  const cgroup = createCpuCgroup(requested, joined);
  if (cgroup !== null) {
    cleanup.push(() => cgroup.remove());
    return { cap: { kind: "cgroup", path: cgroup.path, cpus: requested }, cgroup };
  }
  throw unavailable(
    `cannot cap the agent's CPU time at ${formatCpuCount(requested)}: no CPU cgroup can be made here (cgroup v2's cpu.max or v1's cpu.cfs_quota_us)`,
    "mount the cpu cgroup controller writable for acp (with cgroup v2, delegate it to acp's cgroup), or leave --max-cpu and sandbox.max_cpu out to run without a CPU cap",
  );
}
