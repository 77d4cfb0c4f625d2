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
import { eventCount, makeCgroup, removeCgroup, writeCap } from "./cgroups.js";

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

/** Makes a pids cgroup capped at `max` (`makeCgroup`), or returns null when none can be made here. */
export function createPidsCgroup(max: number): PidsCgroup | null {
  // a v2 child has pids.max only when the parent hands the controller down
  const path = makeCgroup("pids", (dir) => writeCap(dir, "pids.max", String(max)));
  return path === null
    ? null
    : { path, refusals: () => eventCount(path, "pids.events", "max"), remove: () => removeCgroup(path) };
}
