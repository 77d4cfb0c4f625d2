import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";
import type { PendingConsentRow } from "./pending-store.js";

/**
 * The process that wrote a pending consent row and waits for its answer: its pid, the machine it runs on,
 * and when it started (`<boot id>:<pid namespace>:<start time in clock ticks>` from `/proc`), so that a pid
 * the system gave to another process after the owner died is not taken for the owner, and a pid of another
 * pid namespace (a container with the same host name sharing the file) is not looked for in this one. `start` is null where `/proc` cannot
 * be read (not Linux): then the pid alone is checked.
 */
export interface PendingOwner {
  readonly pid: number;
  readonly host: string;
  readonly start: string | null;
}

/** What can be told of a row's owner from this process: `running`, `gone`, or `unknown` (another machine, no owner recorded). */
export type OwnerState = "running" | "gone" | "unknown";

function bootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return null;
  }
}

/** The state letter and start time of `pid` from `/proc/<pid>/stat`, or null when it cannot be read. */
function procStat(pid: number | "self"): { readonly state: string; readonly start: string } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so fields are counted after the last `)`
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const start = fields[19]; // field 22 of the line: start time after boot, in clock ticks
  if (state === undefined || start === undefined || !/^\d+$/.test(start)) return null;
  return { state, start };
}

/** The inode of this process's pid namespace (`pid:[4026531836]` → `4026531836`), or null. */
function pidNamespace(): string | null {
  try {
    return /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** `pid` as seen from this process (its number means something in this pid namespace only). */
function startOf(pid: number | "self"): string | null {
  const boot = bootId();
  const stat = procStat(pid);
  return boot === null || stat === null ? null : `${boot}:${pidNamespace() ?? "-"}:${stat.start}`;
}

let self: PendingOwner | undefined;

/** This process, as the owner of the rows it writes. */
export function currentOwner(): PendingOwner {
  self ??= { pid: process.pid, host: hostname(), start: startOf("self") };
  return self;
}

/**
 * Whether the owner of a row still runs: `gone` when it is on this machine and its pid no longer exists,
 * is a zombie, or now belongs to a process that started at another time (or the machine rebooted);
 * `unknown` for a row without an owner (written before owners were recorded) or owned on another machine,
 * which this process cannot see.
 */
export function ownerState(owner: PendingOwner | null): OwnerState {
  if (owner === null || owner.host !== hostname()) return "unknown";
  // a pid of another pid namespace names another process here (or none): it cannot be looked for
  const namespace = owner.start?.split(":")[1];
  if (namespace !== undefined && namespace !== (pidNamespace() ?? "-")) return "unknown";
  if (owner.pid === process.pid) return owner.start === currentOwner().start ? "running" : "gone";
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return "gone";
  }
  if (owner.start === null) return "running";
  const stat = procStat(owner.pid);
  if (stat === null) return bootId() === null ? "running" : "gone";
  if (stat.state === "Z" || stat.state === "X") return "gone";
  return startOf(owner.pid) === owner.start ? "running" : "gone";
}

/** `pid 1234 on host` — how messages name an owner. */
export function describeOwner(owner: PendingOwner): string {
  return `pid ${owner.pid} on ${owner.host}`;
}

/**
 * Whether a pending row's proxy died while it waited (killed, crashed): nobody reads its answer any more.
 * Such a row is not listed as waiting (`acp pending`, `acp serve`'s API and console), cannot be answered,
 * and the next `acp proxy` to start records it `withdrawn`. Only rows of this machine can be told
 * ({@link ownerState}); others count as waiting.
 */
export function isOrphaned(row: Pick<PendingConsentRow, "status" | "owner">): boolean {
  return row.status === "pending" && ownerState(row.owner) === "gone";
}
