/**
 * Why a sandbox could not start or run. Each carries a stable code, a one-line message naming the cause,
 * and the fix a person can apply.
 */

/** Stable codes of the sandbox (listed in docs/reference/errors.md, section Sandbox). */
export type SandboxErrorCode =
  | "sandbox_unavailable"
  | "sandbox_command_not_found"
  | "sandbox_bridge_in_use"
  | "sandbox_bridge_failed"
  | "sandbox_setup_failed"
  | "sandbox_invalid_egress"
  | "sandbox_cwd_in_home"
  | "sandbox_host_sockets"
  | "sandbox_home_writable"
  | "sandbox_home_linked";

/** The issue behind a `SandboxError`. */
export interface SandboxIssue {
  readonly code: SandboxErrorCode;
  readonly message: string;
  readonly help?: string;
}

/** Thrown by the sandbox when it cannot start; nothing is left running when it is thrown. */
export class SandboxError extends Error {
  readonly code: SandboxErrorCode;
  readonly help: string | undefined;
  constructor(issue: SandboxIssue) {
    super(issue.help === undefined ? issue.message : `${issue.message} (${issue.help})`);
    this.name = "SandboxError";
    this.code = issue.code;
    this.help = issue.help;
  }
}

/** The kernel (or the machine) refused the isolation that was asked for. */
export function unavailable(message: string, help: string): SandboxError {
  return new SandboxError({ code: "sandbox_unavailable", message, help });
}

/** The agent command does not exist. */
export function commandNotFound(command: string): SandboxError {
  return new SandboxError({
    code: "sandbox_command_not_found",
    message: `command \`${command}\` not found`,
    help: "check the spelling, give an absolute path, or add its directory to PATH",
  });
}

/** The bridge socket is held by another process. */
export function bridgeInUse(path: string): SandboxError {
  return new SandboxError({
    code: "sandbox_bridge_in_use",
    message: `bridge socket \`${path}\` is in use by another process`,
    help: "stop the other `acp run`, or pass a different --bridge-dir",
  });
}

/** The bridge socket could not be bound. */
export function bridgeFailed(path: string, cause: string): SandboxError {
  return new SandboxError({
    code: "sandbox_bridge_failed",
    message: `cannot bind bridge socket \`${path}\`: ${cause}`,
    help: "pass a writable --bridge-dir whose path is shorter than 100 characters",
  });
}

/**
 * The `--bridge-dir` given can be changed by someone else: they could replace `mcp.sock` or `egress.sock`
 * with their own and stand in for ACP, or for the agent.
 */
export function bridgeDirUnsafe(path: string, why: string): SandboxError {
  return new SandboxError({
    code: "sandbox_bridge_failed",
    message: `the bridge directory \`${path}\` ${why}: another user could replace the bridge sockets and stand in for ACP`,
    help: "pass a --bridge-dir only you can write (`chmod 700` it), or leave --bridge-dir out for a fresh private one",
  });
}

/** Setting up the namespaces failed inside the sandbox. */
export function setupFailed(message: string): SandboxError {
  return new SandboxError({
    code: "sandbox_setup_failed",
    message: `sandbox setup failed: ${message}`,
    help: "run `acp doctor`, or pass --isolation none to run without isolation (with a warning)",
  });
}

/** The working directory is inside ACP's home, which the sandbox hides. */
export function cwdInHome(cwd: string, home: string): SandboxError {
  return new SandboxError({
    code: "sandbox_cwd_in_home",
    message: `the working directory \`${cwd}\` is inside ACP's home \`${home}\`, which the agent must not see`,
    help: "cd to the agent's project directory first",
  });
}

/**
 * A directory that would be bound back from under `/tmp`, `/var/tmp` or `/dev/shm` (the working directory, or
 * the entry holding a path on the agent's command line) holds a way out of the sandbox: a Unix socket, a FIFO,
 * a device node, or a directory programs keep their sockets in. `what` says which path brings it back.
 */
export function hostSockets(what: string, channel: { readonly path: string; readonly what: string }): SandboxError {
  return new SandboxError({
    code: "sandbox_host_sockets",
    message: `${what}, but \`${channel.path}\` ${channel.what}: a program outside the sandbox listens there, and the agent could reach it`,
    help: "keep the agent, its working directory and the paths it is given out of /tmp, /var/tmp and /dev/shm (e.g. under your home), or remove what is named",
  });
}
