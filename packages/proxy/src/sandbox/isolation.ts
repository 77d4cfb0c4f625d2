/**
 * Isolation levels and how `auto` picks one: `netns` (root: network + mount + PID namespaces), `userns`
 * (no root: the same inside a user namespace) and `none` (no isolation, a loud warning on every start).
 */
import { spawnSync } from "node:child_process";
import { unavailable, type SandboxError } from "./errors.js";
import { findTool, SYSTEM_PATH } from "./find-executable.js";

/** What a person may ask for. */
export const ISOLATION_REQUESTS = ["auto", "netns", "userns", "none"] as const;
export type IsolationRequest = (typeof ISOLATION_REQUESTS)[number];

/** What actually runs. */
export type IsolationLevel = "netns" | "userns" | "none";

/**
 * `unshare` flags of each namespaced level (before `--`). `--ipc`: the host's System V shared memory,
 * semaphores and message queues, and its POSIX message queues, are out of reach (under `netns` the agent is
 * uid 0, and IPC objects check only the uid: root's shared memory, a display's MIT-SHM images among them).
 */
export const UNSHARE_FLAGS: Readonly<Record<"netns" | "userns", readonly string[]>> = {
  netns: ["--net", "--mount", "--ipc", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private"],
  userns: [
    "--user",
    "--map-root-user",
    "--net",
    "--mount",
    "--ipc",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
    "--propagation",
    "private",
  ],
};

/** Whether each level can start here, and why not. */
export interface IsolationProbe {
  readonly netns: { readonly ok: boolean; readonly why?: string };
  readonly userns: { readonly ok: boolean; readonly why?: string };
}

/** The chosen level and, for `auto`, why the stronger ones were passed over. */
export interface IsolationChoice {
  readonly level: IsolationLevel;
  readonly requested: IsolationRequest;
  readonly passedOver: readonly string[];
}

/** Probes the kernel: runs `unshare … true` for each namespaced level (cheap, leaves nothing behind). */
export function probeIsolation(options: { readonly unshare?: string; readonly isRoot?: boolean } = {}): IsolationProbe {
  const unshare = options.unshare ?? findTool("unshare", process.env["PATH"]) ?? "unshare";
  const isRoot = options.isRoot ?? process.getuid?.() === 0;
  const attempt = (flags: readonly string[]): { ok: boolean; why?: string } => {
    // `true` from the system's directories too: it runs with the namespaces' privileges
    const r = spawnSync(unshare, [...flags, "--", "true"], {
      encoding: "utf8",
      timeout: 10_000,
      env: { ...process.env, PATH: `${SYSTEM_PATH}:${process.env["PATH"] ?? ""}` },
    });
    if (r.error !== undefined) return { ok: false, why: `cannot run \`${unshare}\`: ${r.error.message}` };
    if (r.status === 0) return { ok: true };
    return { ok: false, why: (r.stderr || `exit ${String(r.status)}`).trim().split("\n")[0] ?? "" };
  };
  const netns = isRoot ? attempt(UNSHARE_FLAGS.netns) : { ok: false, why: "netns needs root" };
  return { netns, userns: attempt(UNSHARE_FLAGS.userns) };
}

const HELP: Readonly<Record<"netns" | "userns", string>> = {
  netns: "run as root, use --isolation userns, or --isolation none to run without isolation (with a warning)",
  userns:
    "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces>0; " +
    "on Ubuntu also kernel.apparmor_restrict_unprivileged_userns=0), run as root with --isolation netns, " +
    "or pass --isolation none to run without isolation (with a warning)",
};

/** Picks the level: an explicit level must be available (else a `SandboxError`); `auto` takes the strongest. */
export function chooseIsolation(
  requested: IsolationRequest,
  probe: IsolationProbe,
): { ok: true; choice: IsolationChoice } | { ok: false; error: SandboxError } {
  if (requested === "none") return { ok: true, choice: { level: "none", requested, passedOver: [] } };
  if (requested === "netns" || requested === "userns") {
    const p = probe[requested];
    if (p.ok) return { ok: true, choice: { level: requested, requested, passedOver: [] } };
    return {
      ok: false,
      error: unavailable(
        `the kernel refused isolation \`${requested}\`: ${p.why ?? "unknown reason"}`,
        HELP[requested],
      ),
    };
  }
  const passedOver: string[] = [];
  for (const level of ["netns", "userns"] as const) {
    const p = probe[level];
    if (p.ok) return { ok: true, choice: { level, requested, passedOver } };
    passedOver.push(`${level}: ${p.why ?? "unavailable"}`);
  }
  return { ok: true, choice: { level: "none", requested, passedOver } };
}
