/**
 * The agent sandbox of `acp run`: network, mount and PID namespaces (root or user namespaces), ACP's home
 * covered, the environment scrubbed, MCP and an egress CONNECT proxy bridged in over Unix sockets.
 */
export { SandboxError, type SandboxErrorCode, type SandboxIssue } from "./errors.js";
export { scrubEnvironment, sandboxVariables, type ScrubOptions, type ScrubbedEnvironment } from "./environment.js";
export { parseEgressAllowList, matchEgress, normalizeHost, type EgressRule } from "./allow-list.js";
export {
  ISOLATION_REQUESTS,
  UNSHARE_FLAGS,
  chooseIsolation,
  probeIsolation,
  type IsolationChoice,
  type IsolationLevel,
  type IsolationProbe,
  type IsolationRequest,
} from "./isolation.js";
export {
  NETWORK_CONNECT,
  createEgressDecider,
  isLocalAddress,
  hostAddressList,
  type EgressDecider,
  type EgressDecisionOptions,
  type EgressVerdict,
} from "./egress-decision.js";
export { startEgressProxy, type EgressProxy, type EgressProxyOptions } from "./egress-proxy.js";
export { listenUnixBridge, bindUnixSocket, type UnixBridge } from "./unix-bridge.js";
export { SANDBOX_PORTS, type SandboxInitConfig, type CoverMount, type KeptPath } from "./init-source.js";
export { COVERED_ROOTS, planNamespace } from "./namespace-plan.js";
export { checkWritablePaths, type WritablePathIssue, type WritablePathsResult } from "./writable-paths.js";
export { FORWARDED_SIGNALS, type SignalSource } from "./spawn-agent.js";
export { findExecutable, findTool, SYSTEM_PATH } from "./find-executable.js";
export { agentCanChange, agentWritableRoots } from "./agent-reach.js";
export { noneWarning, startLine } from "./messages.js";
export { HOME_LINK_CHECKED_DIRS, HOME_LINK_CHECKED_FILES, linkedHomeFiles, type LinkedHomeFile } from "./home-links.js";
export { runSandboxed, type SandboxRunOptions, type SandboxRunResult } from "./run-sandboxed.js";
export { KEYCTL_SYSCALL, keyringWrapper, sessionKeyring, type SessionKeyring } from "./session-keyring.js";
export { keyringAbis, keyringFilter, PRCTL_SYSCALL, type BpfInstruction, type KeyringAbi } from "./keyring-filter.js";
export {
  DEFAULT_MAX_MEMORY,
  MIN_MAX_MEMORY,
  createMemoryCgroup,
  formatMemorySize,
  parseMemorySize,
  type MemoryCap,
  type MemoryCgroup,
} from "./memory-cap.js";
export {
  CPU_PERIOD_US,
  MAX_MAX_CPU,
  MIN_MAX_CPU,
  cpuQuota,
  createCpuCgroup,
  formatCpuCount,
  parseCpuCount,
  type CpuCap,
  type CpuCgroup,
} from "./cpu-cap.js";
export { DEFAULT_MAX_PROCESSES, createPidsCgroup, type PidsCgroup, type ProcessCap } from "./process-cap.js";
