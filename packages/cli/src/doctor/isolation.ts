import type { HomeCheck } from "@acp/store";

/** What the isolation probe reads; injectable for tests. */
export interface IsolationProbe {
  readonly platform: string;
  /** The effective uid, undefined where there is none (Windows). */
  readonly uid: number | undefined;
  /** Reads a /proc file, trimmed; undefined when it does not exist or cannot be read. */
  readonly read: (path: string) => string | undefined;
}

/**
 * Whether the agent sandbox (§2.2) can get full network isolation here: Linux as root, or Linux with
 * unprivileged user namespaces enabled (`kernel.unprivileged_userns_clone` not 0,
 * `user.max_user_namespaces` above 0, no AppArmor restriction). Otherwise a warning: the proxy still
 * works, but the agent is not network-isolated (§9.2 requires the warning).
 */
export function checkIsolation(probe: IsolationProbe): HomeCheck {
  const name = "isolation";
  if (probe.platform !== "linux") {
    return {
      status: "warn",
      name,
      detail: `${probe.platform}: no network namespaces; run the agent in docker for full isolation`,
    };
  }
  if (probe.uid === 0) return { status: "ok", name, detail: "running as root: network namespaces available" };
  const clone = probe.read("/proc/sys/kernel/unprivileged_userns_clone");
  if (clone === "0") {
    return {
      status: "warn",
      name,
      detail: "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)",
    };
  }
  const max = probe.read("/proc/sys/user/max_user_namespaces");
  if (max !== undefined && Number(max) <= 0) {
    return { status: "warn", name, detail: "user namespaces are disabled (user.max_user_namespaces = 0)" };
  }
  if (probe.read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") === "1") {
    return {
      status: "warn",
      name,
      detail: "apparmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)",
    };
  }
  if (max === undefined)
    return {
      status: "warn",
      name,
      detail: "cannot tell whether user namespaces are available (/proc/sys/user/max_user_namespaces unreadable)",
    };
  return { status: "ok", name, detail: `unprivileged user namespaces available (max_user_namespaces = ${max})` };
}
