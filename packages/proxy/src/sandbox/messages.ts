/** What `acp run` says at start: the level it runs at, and the loud warning of `none` (§9.2 MUST warn). */
import type { IsolationChoice } from "./isolation.js";

const WHAT: Readonly<Record<IsolationChoice["level"], string>> = {
  netns:
    "network, mount, IPC and PID namespaces as root; only loopback inside; host read-only but the working directory and --writable; capabilities dropped",
  userns:
    "user, network, mount, IPC and PID namespaces without root; only loopback inside; host read-only but the working directory and --writable; capabilities dropped",
  none: "NO ISOLATION",
};

/** The line naming the level (and the process cap, when there is one), for every start. */
export function startLine(
  choice: IsolationChoice,
  mcpUrl: string,
  egressUrl: string,
  maxProcesses: number | null = null,
): string {
  const picked = choice.requested === "auto" ? " (picked by --isolation auto)" : "";
  const cap = maxProcesses !== null ? `; at most ${maxProcesses} processes` : "";
  return `acp run: isolation ${choice.level}${picked}: ${WHAT[choice.level]}${cap}; MCP at ${mcpUrl}, egress proxy at ${egressUrl}`;
}

/** The warning printed on every start without isolation. */
export function noneWarning(choice: IsolationChoice): string[] {
  const lines = [
    "acp run: ******************************************************************************",
    "acp run: WARNING: the agent runs WITHOUT A SANDBOX (isolation none).",
    "acp run: WARNING: it can reach the network directly and bypass the MCP proxy, and it can read or",
    "acp run: WARNING: change ACP's keys, vault, policy and audit trail; only its environment is scrubbed.",
    "acp run: WARNING: use --isolation netns (root) or --isolation userns; see docs/guides/sandbox.md",
  ];
  for (const why of choice.passedOver) lines.push(`acp run: WARNING: not available here: ${why}`);
  lines.push("acp run: ******************************************************************************");
  return lines;
}
