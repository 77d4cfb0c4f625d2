/**
 * `runSandboxed`: starts an agent at the chosen isolation level with ACP's MCP endpoint and egress proxy
 * bridged in, waits for it, and takes everything down again. Used by `acp run`.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import type { AuditSink, ConsentBroker } from "../gate/types.js";
import type { EgressRule } from "./allow-list.js";
import { createEgressDecider } from "./egress-decision.js";
import { startEgressProxy } from "./egress-proxy.js";
import { sandboxVariables, scrubEnvironment } from "./environment.js";
import { coveredRootAt } from "./covered-roots.js";
import { bridgeDirUnsafe, commandNotFound, setupFailed, unavailable } from "./errors.js";
import { findExecutable, findTool } from "./find-executable.js";
import { homeFileLinked } from "./home-links.js";
import { SANDBOX_PORTS } from "./init-source.js";
import {
  chooseIsolation,
  probeIsolation,
  type IsolationLevel,
  type IsolationProbe,
  type IsolationRequest,
} from "./isolation.js";
import { planNamespace } from "./namespace-plan.js";
import { socketDirsLeftOut } from "./socket-dir-covers.js";
import { killGroup, spawnNamespaced, spawnUnisolated, type SignalSource, type StartedAgent } from "./spawn-agent.js";
import { listenMcpBridge, listenUnixBridge, type UnixBridge } from "./unix-bridge.js";
import { noneWarning, startLine } from "./messages.js";
import { capMemory, formatMemorySize, MIN_MAX_MEMORY } from "./memory-cap.js";
import { capCpu, formatCpuCount, isCpuCount, MAX_MAX_CPU, MIN_MAX_CPU } from "./cpu-cap.js";
import { createPidsCgroup, DEFAULT_MAX_PROCESSES, type PidsCgroup, type ProcessCap } from "./process-cap.js";
import { sessionKeyring, type SessionKeyring } from "./session-keyring.js";

/** Everything `runSandboxed` needs. */
export interface SandboxRunOptions {
  readonly argv: readonly string[];
  readonly isolation: IsolationRequest;
  /** ACP's home: hidden from the agent. */
  readonly home: string;
  /** The environment the agent's is derived from (scrubbed). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /**
   * Absolute paths the agent may change besides its working directory (`acp run --writable`); the rest of the
   * host is read-only under `netns` and `userns`. Checked by `checkWritablePaths`.
   */
  readonly writable?: readonly string[];
  /** The proxy's HTTP listener on the host's loopback (`listenHttp`), bridged to `ACP_MCP_URL`. */
  readonly mcpTarget: {
    readonly host: string;
    readonly port: number;
    /**
     * The bearer token the listener asks for (`acp run` makes a random one): the bridge adds it to each request,
     * so the agent needs none, while other users and programs of the host, which can reach the listener's port
     * too, cannot use it. Without one, connections are forwarded as they are.
     */
    readonly token?: string;
  };
  /** When given, the agent's stdin/stdout carry MCP (§10.1) and are handed here (e.g. to `serveStdio`). */
  readonly stdio?: (pipes: { readonly stdout: Readable; readonly stdin: Writable }) => void | Promise<void>;
  readonly egress: {
    readonly allow: readonly EgressRule[];
    /** Asked for every destination not on the allow-list (`network.connect`); deny when nobody answers. */
    readonly broker: ConsentBroker;
    readonly consentTimeoutMs?: number;
  };
  /** Receives `sandbox_started`, `sandbox_exited`, `sandbox_egress`, `sandbox_egress_refused`. */
  readonly audit: AuditSink;
  /** One line for stderr. */
  readonly log: (line: string) => void;
  /** Secret values ACP holds: any variable containing one is removed from the agent's environment. */
  readonly secretValues?: readonly string[];
  /**
   * The most processes (threads included) the sandbox may hold at once (`acp run --max-processes`); default
   * `DEFAULT_MAX_PROCESSES`. Given and impossible to apply here: the run is refused; left out and impossible:
   * a warning. No effect with `none`.
   */
  readonly maxProcesses?: number;
  /**
   * The most memory, in bytes, the sandbox may use (`acp run --max-memory`; a memory cgroup); default
   * `DEFAULT_MAX_MEMORY`. Past it the kernel kills a process of the sandbox. Given and impossible to apply here:
   * the run is refused; left out and impossible: a warning. No effect with `none`.
   */
  readonly maxMemory?: number;
  /**
   * The most CPU time the sandbox may use, in CPUs (`acp run --max-cpu`, e.g. 1.5; a CPU cgroup): past it the
   * kernel holds its processes back until the next 100 ms period. Default none (no cap). Given and impossible to
   * apply here: the run is refused. No effect with `none`.
   */
  readonly maxCpu?: number;
  /** Where the bridge sockets live; default a fresh private directory under the temp directory. */
  readonly bridgeDir?: string;
  readonly probe?: IsolationProbe;
  /**
   * How the agent gets a session keyring of its own under `netns` and `userns`; default `sessionKeyring()`
   * (Perl from the system's directories). Null: it shares acp's, with a warning.
   */
  readonly sessionKeyring?: SessionKeyring | null;
  readonly signals?: SignalSource;
  readonly sessionId?: string;
  /** Further fields for the `sandbox_started` audit event (e.g. the intent's digest). */
  readonly startFields?: Readonly<Record<string, unknown>>;
}

/** How the run ended. */
export interface SandboxRunResult {
  readonly level: IsolationLevel;
  /** The agent's exit status; 128 + the signal number when it was killed. */
  readonly exitCode: number;
}

/** Runs the agent sandboxed. Throws a `SandboxError` (with nothing left running) when it cannot start. */
export async function runSandboxed(options: SandboxRunOptions): Promise<SandboxRunResult> {
  const [command] = options.argv;
  if (command === undefined || command === "") throw commandNotFound("");
  if (findExecutable(command, options.env["PATH"], options.cwd) === null) throw commandNotFound(command);
  const chosen = chooseIsolation(options.isolation, options.probe ?? probeIsolation());
  if (!chosen.ok) throw chosen.error;
  const { level } = chosen.choice;
  const tools = level === "none" ? null : requireTools(options.env["PATH"]);
  const max = options.maxProcesses;
  if (max !== undefined && (!Number.isSafeInteger(max) || max < 1)) {
    throw setupFailed(`the process cap must be a whole number of at least 1, not ${String(max)}`);
  }
  const maxMemory = options.maxMemory;
  if (maxMemory !== undefined && (!Number.isSafeInteger(maxMemory) || maxMemory < MIN_MAX_MEMORY)) {
    throw setupFailed(
      `the memory cap must be a whole number of bytes, at least ${formatMemorySize(MIN_MAX_MEMORY)}, not ${String(maxMemory)}`,
    );
  }
  const maxCpu = options.maxCpu;
  if (maxCpu !== undefined && !isCpuCount(maxCpu)) {
    throw setupFailed(
      `the CPU cap must be a number of CPUs from ${MIN_MAX_CPU} to ${MAX_MAX_CPU}, not ${String(maxCpu)}`,
    );
  }
  // A file of the home with another name (a hard link) elsewhere: the sandbox covers the home's paths, not
  // that name. Refused before anything starts (with no isolation the home is not hidden anyway).
  if (level !== "none") {
    const linked = homeFileLinked(realpathOr(options.home));
    if (linked !== undefined) throw linked;
  }
  const cleanup: (() => Promise<void> | void)[] = [];
  try {
    const sessionId = options.sessionId ?? `run-${process.pid}-${Date.now().toString(36)}`;
    const decider = createEgressDecider({
      allow: options.egress.allow,
      broker: options.egress.broker,
      sessionId,
      agent: command,
      ...(options.egress.consentTimeoutMs !== undefined ? { consentTimeoutMs: options.egress.consentTimeoutMs } : {}),
    });
    const bridgeDir = level === "none" ? null : prepareBridgeDir(options.bridgeDir, cleanup);
    const egress = await startEgressProxy({
      decider,
      audit: options.audit,
      listen: bridgeDir === null ? { tcp: true } : { path: join(bridgeDir, "egress.sock") },
      log: options.log,
    });
    cleanup.push(() => egress.close());
    // the MCP bridge: with a token, requests go on with it; without, connections as they are
    const token = options.mcpTarget.token;
    const mcpBridge = (path: string): Promise<UnixBridge> =>
      token !== undefined
        ? listenMcpBridge({ path }, { ...options.mcpTarget, token })
        : listenUnixBridge(path, options.mcpTarget);
    if (bridgeDir !== null) {
      const bridge = await mcpBridge(join(bridgeDir, "mcp.sock"));
      cleanup.push(() => bridge.close());
    } else if (options.bridgeDir !== undefined) {
      // none with --bridge-dir: the sockets for an isolation ACP does not make itself (a container)
      const dir = prepareBridgeDir(options.bridgeDir, cleanup);
      const mcp = await mcpBridge(join(dir, "mcp.sock"));
      cleanup.push(() => mcp.close());
      const port = Number(new URL(egress.address).port);
      const out = await listenUnixBridge(join(dir, "egress.sock"), { host: "127.0.0.1", port });
      cleanup.push(() => out.close());
    }
    // with none the agent reaches the listener over the host's loopback: through a bridge that adds the token
    let mcpUrl = `http://127.0.0.1:${SANDBOX_PORTS.mcp}/mcp`;
    if (level === "none" && token === undefined) {
      mcpUrl = `http://${options.mcpTarget.host}:${options.mcpTarget.port}/mcp`;
    } else if (level === "none" && token !== undefined) {
      const direct = await listenMcpBridge({ tcp: true }, { ...options.mcpTarget, token });
      cleanup.push(() => direct.close());
      mcpUrl = `http://127.0.0.1:${String(direct.port)}/mcp`;
    }
    const egressUrl = level === "none" ? egress.address : `http://127.0.0.1:${SANDBOX_PORTS.egress}`;
    const scrubbed = scrubEnvironment(options.env, { secretValues: options.secretValues ?? [] });
    const env = { ...scrubbed.env, ...sandboxVariables({ mcpUrl, egressUrl, isolation: level }) };

    const capped = level === "none" ? { cap: null, cgroup: null } : capProcesses(max, options, cleanup);
    const memory =
      level === "none"
        ? { cap: null, cgroup: null }
        : capMemory(maxMemory, capped.cgroup?.path ?? null, options.log, cleanup);
    // on cgroup v2 the one cgroup the process or memory cap made, when there is one (a process is in one only)
    const joined = [capped.cgroup?.path, memory.cgroup?.path].filter((p): p is string => p !== undefined);
    const cpu = level === "none" ? { cap: null, cgroup: null } : capCpu(maxCpu, joined, cleanup);
    if (level === "none") for (const line of noneWarning(chosen.choice)) options.log(line);
    const keyring =
      level === "none" ? null : options.sessionKeyring !== undefined ? options.sessionKeyring : sessionKeyring();
    if (level !== "none" && keyring === null) {
      options.log(
        `acp run: the agent shares this session's kernel keyring: no \`perl\` in /usr/sbin, /usr/bin, /sbin or /bin to give it one of its own and keep it from the others (or no keyctl numbers for this architecture), so it can read the keys linked there${level === "netns" ? ", and those of root's user keyring" : ""} (install perl, or start acp with \`keyctl session - acp run …\`${level === "netns" ? " and keep no keys in root's user keyring" : ""})`,
      );
    }
    options.log(startLine(chosen.choice, mcpUrl, egressUrl, capped.cap?.max ?? null));
    await options.audit.record("sandbox_started", {
      isolation: level,
      requested: chosen.choice.requested,
      passed_over: chosen.choice.passedOver,
      command,
      mcp: options.stdio !== undefined ? "stdio+http" : "http",
      egress_allow: options.egress.allow.map((r) => r.source),
      writable: options.writable ?? [],
      max_processes: capped.cap?.max ?? null,
      max_memory: memory.cap?.max ?? null,
      max_cpu: cpu.cap?.cpus ?? null,
      env_removed: scrubbed.removed,
      ...options.startFields,
    });
    const spawnOptions = {
      mcpOverStdio: options.stdio !== undefined,
      signals: options.signals ?? process,
      unshare: tools?.unshare ?? "unshare",
    };
    if (level !== "none" && realpathOr(options.cwd) === "/") {
      options.log(
        "acp run: the working directory is `/`: it stays read-only (--writable names what the agent may change)",
      );
    } else if (level !== "none" && coveredRootAt(realpathOr(options.cwd)) !== undefined) {
      options.log(
        `acp run: the working directory \`${options.cwd}\` is shared by every program on this host: the agent works in an empty one of its own, and what it leaves there is gone when it ends (run from a directory of its own to keep its work)`,
      );
    }
    const plan =
      level === "none" || tools === null || bridgeDir === null
        ? null
        : planNamespace({
            argv: options.argv,
            env,
            cwd: options.cwd,
            home: options.home,
            bridgeDir,
            setpriv: tools.setpriv,
            ports: SANDBOX_PORTS,
            processCap: capped.cap,
            memoryCap: memory.cap,
            cpuCap: cpu.cap,
            sessionKeyring: keyring,
            ...(options.writable !== undefined ? { writable: options.writable } : {}),
          });
    const leftOut = plan === null ? undefined : socketDirsLeftOut(plan.socketDirs);
    if (leftOut !== undefined) options.log(leftOut);
    const agent: StartedAgent =
      plan === null || level === "none"
        ? spawnUnisolated(options.argv, env, options.cwd, spawnOptions)
        : await spawnNamespaced(level, plan, spawnOptions);
    if (agent.pipes !== null && options.stdio !== undefined) await options.stdio(agent.pipes);
    const exitCode = await agent.exited;
    await killGroup(agent.child, agent.exited);
    const refused = capped.cgroup?.refusals() ?? 0;
    if (refused > 0 && capped.cap !== null) {
      options.log(
        `acp run: the agent reached its cap of ${capped.cap.max} processes: a new process was refused ${refused} time${refused === 1 ? "" : "s"} (--max-processes raises the cap)`,
      );
    }
    const oomKills = memory.cgroup?.oomKills() ?? 0;
    if (oomKills > 0 && memory.cap !== null) {
      options.log(
        `acp run: the agent reached its memory cap of ${formatMemorySize(memory.cap.max)}: the kernel killed ${oomKills} process${oomKills === 1 ? "" : "es"} of the sandbox (--max-memory raises the cap)`,
      );
    }
    const throttled = cpu.cgroup?.throttled() ?? 0;
    if (throttled > 0 && cpu.cap !== null) {
      options.log(
        `acp run: the agent reached its CPU cap of ${formatCpuCount(cpu.cap.cpus)}: the kernel held the sandbox back in ${throttled} period${throttled === 1 ? "" : "s"} of 100 ms (--max-cpu raises the cap)`,
      );
    }
    await options.audit.record("sandbox_exited", {
      isolation: level,
      exit_code: exitCode,
      ...(capped.cgroup !== null ? { processes_refused: refused } : {}),
      ...(memory.cgroup !== null ? { oom_kills: oomKills } : {}),
      ...(cpu.cgroup !== null ? { cpu_throttled: throttled } : {}),
    });
    return { level, exitCode };
  } finally {
    for (const step of cleanup.reverse()) await step();
  }
}

/**
 * How the sandbox's processes are capped here (`process-cap.ts`): a pids cgroup when one can be made, else
 * RLIMIT_NPROC through `prlimit` when acp is not root (the kernel exempts uid 0 from it). Neither: refused
 * when a cap was asked for, a warning for the default.
 */
function capProcesses(
  requested: number | undefined,
  options: SandboxRunOptions,
  cleanup: (() => Promise<void> | void)[],
): { cap: ProcessCap | null; cgroup: PidsCgroup | null } {
  const max = requested ?? DEFAULT_MAX_PROCESSES;
  const cgroup = createPidsCgroup(max);
  if (cgroup !== null) {
    cleanup.push(() => cgroup.remove());
    return { cap: { kind: "cgroup", path: cgroup.path, max }, cgroup };
  }
  const root = process.geteuid?.() === 0;
  const prlimit = root ? null : findTool("prlimit", options.env["PATH"]);
  if (prlimit !== null) return { cap: { kind: "rlimit", prlimit, max }, cgroup: null };
  const why = root
    ? "acp runs as root, which the kernel exempts from RLIMIT_NPROC, and no pids cgroup can be made here"
    : "`prlimit` (util-linux) is not installed and no pids cgroup can be made here";
  if (requested !== undefined) {
    throw unavailable(
      `cannot cap the agent's processes at ${max}: ${why}`,
      "mount the pids cgroup controller writable for acp (or install util-linux's prlimit and run acp as another user), or leave --max-processes out to run uncapped (with a warning)",
    );
  }
  options.log(`acp run: the agent's processes are not capped: ${why}; a fork bomb inside the sandbox reaches the host`);
  return { cap: null, cgroup: null };
}

function requireTools(path: string | undefined): { unshare: string; setpriv: string } {
  const unshare = findTool("unshare", path);
  const setpriv = findTool("setpriv", path);
  if (unshare === null || setpriv === null) {
    throw unavailable(
      `\`${unshare === null ? "unshare" : "setpriv"}\` (util-linux) is not installed`,
      "install util-linux, or pass --isolation none to run without isolation (with a warning)",
    );
  }
  return { unshare, setpriv };
}

function prepareBridgeDir(given: string | undefined, cleanup: (() => void)[]): string {
  if (given !== undefined) {
    mkdirSync(given, { recursive: true, mode: 0o700 });
    // a directory someone else may write lets them swap the sockets (and the agent's MCP with them)
    const s = statSync(given);
    const me = process.geteuid?.();
    if (!s.isDirectory()) throw bridgeDirUnsafe(given, "is not a directory");
    if (me !== undefined && s.uid !== me) throw bridgeDirUnsafe(given, `belongs to uid ${s.uid}, not to uid ${me}`);
    if ((s.mode & 0o022) !== 0) {
      throw bridgeDirUnsafe(
        given,
        `is writable by its group or others (mode ${(s.mode & 0o777).toString(8).padStart(4, "0")})`,
      );
    }
    return given;
  }
  const dir = mkdtempSync(join(tmpdir(), "acp-run-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
