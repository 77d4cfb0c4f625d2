import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { Option, type Command } from "commander";
import { parse as parseYaml } from "yaml";
import { compileIntent, formatIssue, yamlErrorText } from "@acp/core";
import {
  DEFAULT_MAX_MEMORY,
  DEFAULT_MAX_PROCESSES,
  ISOLATION_REQUESTS,
  MAX_MAX_CPU,
  MIN_MAX_CPU,
  MIN_MAX_MEMORY,
  SandboxError,
  agentCanChange,
  agentWritableRoots,
  checkWritablePaths,
  createFilePinStore,
  createProxy,
  findExecutable,
  formatMemorySize,
  listenHttp,
  parseCpuCount,
  parseEgressAllowList,
  parseMemorySize,
  runSandboxed,
  serveStdio,
  UPSTREAM_RESTART,
  type IsolationProbe,
  type IsolationRequest,
  type ProxyConfig,
  type SignalSource,
} from "@acp/proxy";
import { resolveHome, resolvePath, type CliContext } from "../context.js";
import { resolvePolicyPath } from "../wiring/policy-path.js";
import { CliError, EXIT, type ExitCode } from "../exit-codes.js";
import { upstreamsOf } from "../wiring/upstream-flags.js";
import { createProxyWiring } from "../wiring/proxy-wiring.js";
import { readConfigFile } from "../wiring/config-file.js";
import {
  collectInvalid,
  configInUse,
  sandboxAllowEgress,
  sandboxCaps,
  type ConfigInUse,
  type SandboxCaps,
} from "../wiring/config-in-use.js";
import { assertCredentialsFit } from "../wiring/credentials.js";
import type { ProxyWiring } from "./proxy.js";

/** What `acp run` plugs in; tests replace the wiring (decide, broker, audit) and the signal source. */
export interface RunDeps {
  readonly wiring: ProxyWiring;
  /** Where SIGINT/SIGTERM/SIGHUP come from; default the `acp` process. */
  readonly signals?: SignalSource;
  /** The kernel probe; default: `unshare` is tried for each level. */
  readonly probe?: IsolationProbe;
}

interface RunFlags {
  isolation: IsolationRequest;
  allowEgress?: string[];
  intent?: string;
  upstream?: string[];
  name?: string[];
  trust?: string[];
  config?: string;
  policy?: string;
  mcpStdio?: boolean;
  bridgeDir?: string;
  writable?: string[];
  maxProcesses?: string;
  maxMemory?: string;
  maxCpu?: string;
}

/** The config file in use, as `acp run` reads it: every key the proxy uses, `sandbox.allow_egress`, secret-looking values. */
interface RunConfig {
  readonly keys: ConfigInUse;
  readonly proxy: ProxyConfig;
  readonly allowEgress: readonly string[];
  /** `sandbox.max_processes`, `sandbox.max_memory` and `sandbox.max_cpu`, each when set (the flags win). */
  readonly caps: SandboxCaps;
  readonly secretValues: readonly string[];
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Registers `acp run`. */
export function registerRun(parent: Command, ctx: CliContext, deps?: RunDeps): void {
  parent
    .command("run")
    .description(
      "run an agent sandboxed: it reaches only ACP (MCP at $ACP_MCP_URL or on its stdin/stdout, egress through " +
        "ACP's CONNECT proxy), cannot see ACP's keys, vault, policy or audit, and gets none of ACP's own " +
        "variables (only ACP_MCP_URL and ACP_SANDBOX, set for it)",
    )
    .argument("<command...>", "the agent command and its arguments (after --)")
    .addOption(
      new Option("--isolation <level>", "auto picks the strongest available")
        .choices([...ISOLATION_REQUESTS])
        .default("auto", "auto"),
    )
    .option("--allow-egress <host:port>", "a destination the agent may reach without asking; repeatable", collect)
    .option(
      "--writable <path>",
      "a file or directory the agent may change besides its working directory (the rest of the host is " +
        "read-only); absolute or relative to the current directory, never inside ACP's home; repeatable",
      collect,
    )
    .option(
      "--max-processes <n>",
      "the most processes (threads included) the sandbox may hold at once; a fork beyond it fails (EAGAIN) " +
        `(default sandbox.max_processes of the config file, else ${DEFAULT_MAX_PROCESSES}; a pids cgroup, or ` +
        "RLIMIT_NPROC when acp is not root; no effect with none)",
    )
    .option(
      "--max-memory <size>",
      "the most memory the sandbox may use, in bytes or with K, M, G (powers of 1024, e.g. 2G); past it the kernel " +
        `kills a process of the sandbox, and acp says so (default sandbox.max_memory of the config file, else ` +
        `${formatMemorySize(DEFAULT_MAX_MEMORY)}; at least ` +
        `${formatMemorySize(MIN_MAX_MEMORY)}; a memory cgroup; no effect with none)`,
    )
    .option(
      "--max-cpu <cpus>",
      "the most CPU time the sandbox may use, in CPUs (e.g. 1.5, or 0.5 for half of one); past it the kernel " +
        "holds its processes back until the next 100 ms period, and acp says so (default sandbox.max_cpu of the " +
        `config file, else no cap; ${MIN_MAX_CPU} to ${MAX_MAX_CPU}; a cpu cgroup; no effect with none)`,
    )
    .option(
      "--intent <file>",
      "the intent the session runtime enforces (YAML or JSON); its digest is recorded in the audit; never in " +
        "the agent's working directory or a --writable path",
    )
    .option("-u, --upstream <cmd-or-url>", "an upstream MCP server (as for `acp proxy`); repeatable", collect)
    .option("-n, --name <name>", "name of the matching --upstream (in order: one for each, or none)", collect)
    .option(
      "--trust <name>",
      "take the upstream named so as trusted (as `trusted: true` in proxy.upstream_servers; as for `acp proxy`); repeatable",
      collect,
    )
    .option(
      "--config <file>",
      "the config file every setting comes from, as for acp proxy (default $ACP_HOME/config.yml when it exists; secrets stay in the home)",
    )
    .option(
      "--policy <file>",
      "policy file (default defaults.policy of the config file, relative to the home, else $ACP_HOME/policy.yml); never in the agent's working directory or a --writable path",
    )
    .option("--mcp-stdio", "speak MCP on the agent's stdin/stdout too (§10.1); otherwise it keeps the terminal")
    .option(
      "--bridge-dir <dir>",
      "where the bridge sockets are bound (default a fresh private temp directory); yours, not writable by group or " +
        "others, not holding ACP's home",
    )
    .addHelpText(
      "after",
      `
Examples:
  acp run -- my-agent --task "tidy the inbox"
  acp run --allow-egress api.anthropic.com:443 -u 'npx -y @modelcontextprotocol/server-filesystem ~/notes' -- claude
  acp run --isolation userns --mcp-stdio -u 'npx -y @modelcontextprotocol/server-memory' -- node agent.js
  acp run --writable ~/.cache/my-agent -- my-agent   # it may change its cache too, not only the working directory
  acp run --isolation none -- ./agent.sh        # no sandbox: warns loudly on every start

Levels: netns (root: network, mount, IPC and PID namespaces), userns (the same without root, where the kernel
allows user namespaces), none (no isolation; warns). Inside: only loopback; ACP_MCP_URL leads to the proxy,
HTTPS_PROXY/HTTP_PROXY to the egress proxy (other hosts are a network.connect consent request, denied when
nobody answers; in a CONNECT tunnel the TLS server name must be the host let through, and port 443 carries
TLS only); no DNS; ACP's home, /tmp and /run are empty. The rest of the host is read-only (netns and
userns): the agent writes only in its working directory (where acp run was started, unless that is / or a
shared directory such as /tmp itself), in its own empty /tmp, and in each --writable PATH, e.g.
--writable ~/.cache/my-agent for its own state. The sandbox holds at most --max-processes processes
(threads included; a fork beyond fails with EAGAIN, and acp says so when it ends): a pids cgroup, or
RLIMIT_NPROC when acp is not root; where neither works, a given --max-processes is refused (exit 1,
sandbox_unavailable) and the default is a warning. Its memory is capped at --max-memory (default
sandbox.max_memory of the config file, else ${formatMemorySize(DEFAULT_MAX_MEMORY)}; a memory cgroup: past the cap
the kernel kills a process of the sandbox, and acp says so); where no memory cgroup can be made, a cap given
(flag or config) is refused (exit 1, sandbox_unavailable) and the default is a warning. Its CPU time is not
capped unless --max-cpu or sandbox.max_cpu says so (a cpu cgroup: past the cap the sandbox runs slower, held
back each 100 ms period, and acp says so); where no cpu cgroup can be made, such a cap is refused (exit 1,
sandbox_unavailable).
Guide: acp docs guides/sandbox

Exit codes: once the agent ran, its own status, passed through unchanged (128+N when it was killed by
signal N), so 1, 2, 3 or 4 may be the agent's. Before the agent starts, acp's own, after a message on
stderr (\`acp: …\`, or \`error: …\` for a bad option): 1 the sandbox cannot start (sandbox_unavailable,
sandbox_bridge_in_use, sandbox_bridge_failed, sandbox_setup_failed, sandbox_cwd_in_home,
sandbox_home_writable: ACP's home is reached through a symbolic link the agent could change;
sandbox_home_linked: a file of ACP's home (its vault, keys, state, config, policy…) has another name, a hard
link elsewhere the agent could read (find it with find -samefile, then remove it);
sandbox_host_sockets: the working directory or a path on the command line would bring back, from under
/tmp, /var/tmp or /dev/shm, a Unix socket, a FIFO, a device or a socket directory such as tmux-UID) or a file cannot
be read (the config file, --intent, the policy, the home's consent graph), 2 usage (the agent command not
found, a bad --allow-egress, --isolation, --max-processes, --max-memory, --max-cpu or --upstream, --name not one for each --upstream or used twice, a --trust that names no upstream, a --writable that
does not exist, is /, is /tmp, /var/tmp, /run or /dev/shm itself, lies in /run or inside ACP's home, or lies
under /tmp, /var/tmp or /dev/shm and holds a socket, a FIFO, a device or a socket directory; a --policy or
--config or --intent file in the working directory or a --writable path, which the agent could rewrite), 4 the config
file, the policy, the home's consent graph or --intent does not validate.`,
    )
    .action(async (argv: string[], flags: RunFlags) => {
      const wiring = deps?.wiring ?? createProxyWiring(ctx, { holder: "run" });
      try {
        await runAgent(ctx, argv, flags, { ...deps, wiring });
      } finally {
        await wiring.close?.();
      }
    });
}

async function runAgent(ctx: CliContext, argv: string[], flags: RunFlags, deps: RunDeps): Promise<void> {
  const home = resolveHome(ctx.io);
  const config = loadRunConfig(ctx, flags.config, home);
  // a bad flag is named as the flag, not as an index into the config file's list it is appended to
  const fromFlags = parseEgressAllowList(flags.allowEgress ?? []);
  if (!fromFlags.ok) {
    const lines = fromFlags.issues.map(
      (i) => `--allow-egress: ${i.message}${i.help !== undefined ? ` (${i.help})` : ""}`,
    );
    throw new CliError(lines.join("\n"), EXIT.usage);
  }
  const allow = parseEgressAllowList([...config.allowEgress, ...(flags.allowEgress ?? [])]);
  if (!allow.ok) throw new CliError(allow.issues.map((i) => formatIssue(i)).join("\n"), EXIT.usage);
  const writable = writablePaths(ctx, flags.writable ?? [], home);
  const maxProcesses = flags.maxProcesses === undefined ? config.caps.maxProcesses : processCap(flags.maxProcesses);
  const maxMemory = flags.maxMemory === undefined ? config.caps.maxMemory : memoryCap(flags.maxMemory);
  const maxCpu = flags.maxCpu === undefined ? config.caps.maxCpu : cpuCap(flags.maxCpu);
  assertAgentCommandFound(ctx, argv[0]);
  const intent = flags.intent !== undefined ? readIntent(ctx, flags.intent) : undefined;
  const log = (line: string): void => void ctx.io.stderr.write(`${line}\n`);
  const upstreams = upstreamsOf(flags, config.proxy.upstreams);
  // before anything starts: a credential with no `server` would reach every one of several upstreams
  assertCredentialsFit(config.keys.credentials, upstreams);
  const policy = resolvePolicyPath(ctx.io, home, flags.policy, config.keys.file);
  const policyPath = policy.path;
  assertOutOfAgentReach(ctx, home, writable, [
    [
      "the policy file",
      policyPath,
      "the policy that decides its own calls (a changed policy is reloaded while it runs)",
    ],
    ...(intent !== undefined
      ? [
          [
            "the intent file",
            intent.path,
            "the intent its sessions run under (read once here, but the next acp run --intent reads what it wrote)",
          ] as const,
        ]
      : []),
    ...(flags.config !== undefined
      ? [
          [
            "the config file",
            resolvePath(ctx.io, flags.config),
            "the config (allowed egress, consent channels, credentials) the next acp run reads",
          ] as const,
        ]
      : []),
  ]);
  const keys = config.keys;
  const audit = deps.wiring.createAudit({ home, config: keys });
  // the §4.1 agent of the consent requests: the command acp run starts (its client names no agent)
  const command = basename(argv[0] ?? "agent");
  const agent = { id: command, name: command, command: argv.join(" ") };
  const broker = deps.wiring.createBroker({ home, config: keys, agent });
  // the plain values of the home's secrets: a variable holding one is kept from the agent, whatever its name
  const homeSecrets = (await deps.wiring.createSecretValues?.({ home, config: keys })) ?? { values: [] };
  if (homeSecrets.problem !== undefined) {
    log(
      `acp run: ${homeSecrets.problem}; so variables holding the vault's or config.yml's secrets under other names cannot be recognised and kept from the agent`,
    );
  }
  const trustedServers = upstreams.filter((u) => u.trusted === true).map((u) => u.name);
  const decide = deps.wiring.createDecide({
    policyPath,
    policyIsDefault: policy.isDefault,
    home,
    config: keys,
    trustedServers,
    ...(intent !== undefined ? { intent: intent.value } : {}),
  });
  const observer = deps.wiring.createObserver?.({ home, config: keys });
  const credentials = deps.wiring.createCredentials?.({ home, config: keys });
  const plans = deps.wiring.createPlans?.({ home, config: keys });
  const proxy = createProxy({
    upstreams,
    decide,
    ...(decide.recheckEdits !== undefined ? { recheckEdits: decide.recheckEdits } : {}),
    ...(observer !== undefined ? { observer } : {}),
    ...(credentials !== undefined ? { credentials } : {}),
    ...(plans !== undefined ? { plans } : {}),
    broker,
    audit,
    pinStore: createFilePinStore(join(home, "pins.json")),
    prefixTools: config.proxy.prefixTools,
    callTimeoutMs: config.proxy.callTimeoutMs,
    callMaxMs: config.proxy.callMaxMs,
    startWaitMs: config.proxy.startWaitMs,
    ...(config.proxy.restartUpstreams ? { restartUpstreams: UPSTREAM_RESTART } : {}),
    consentTimeoutMs: config.proxy.consentTimeoutMs,
    now: ctx.io.now,
    log: (line) => log(`acp proxy: ${line}`),
  });
  await proxy.start();
  if (upstreams.length === 0)
    log("acp run: no upstream MCP servers (--upstream or config.yml): the agent sees no tools");
  try {
    // the listener's port on the host's loopback is open to every user and program of the host: it asks for a
    // token only the sandbox's MCP bridge knows (the agent needs none)
    const token = randomBytes(32).toString("base64url");
    const listener = await listenHttp(proxy, { port: 0, bearerToken: token });
    try {
      const result = await runSandboxed({
        argv,
        isolation: flags.isolation,
        home,
        env: ctx.io.env,
        cwd: ctx.io.cwd,
        writable,
        ...(maxProcesses !== undefined ? { maxProcesses } : {}),
        ...(maxMemory !== undefined ? { maxMemory } : {}),
        ...(maxCpu !== undefined ? { maxCpu } : {}),
        mcpTarget: { host: "127.0.0.1", port: listener.port, token },
        ...(flags.mcpStdio === true
          ? { stdio: async (pipes) => void (await serveStdio(proxy, { stdin: pipes.stdout, stdout: pipes.stdin })) }
          : {}),
        egress: { allow: allow.value, broker, consentTimeoutMs: config.proxy.consentTimeoutMs },
        audit,
        log,
        secretValues: [...config.secretValues, ...homeSecrets.values],
        ...(flags.bridgeDir !== undefined ? { bridgeDir: resolvePath(ctx.io, flags.bridgeDir) } : {}),
        ...(deps.signals !== undefined ? { signals: deps.signals } : {}),
        ...(deps.probe !== undefined ? { probe: deps.probe } : {}),
        ...(intent !== undefined ? { startFields: { intent_file: intent.path, intent_sha256: intent.sha256 } } : {}),
      });
      // the agent's own status, whatever it is (128 + N when killed by signal N): scripts see what the agent said
      ctx.exitCode = result.exitCode as ExitCode;
    } finally {
      await listener.close();
    }
  } catch (err) {
    if (err instanceof SandboxError) throw new CliError(`run: ${err.message}`, exitFor(err));
    throw err;
  } finally {
    await proxy.close();
  }
}

/**
 * The agent command, looked up on PATH before the proxy and its upstreams start (the sandbox looks again): a
 * typo is exit 2 with that one line, not after the proxy's start-up lines.
 */
function assertAgentCommandFound(ctx: CliContext, command: string | undefined): void {
  if (command !== undefined && command !== "" && findExecutable(command, ctx.io.env["PATH"], ctx.io.cwd) !== null)
    return;
  throw new CliError(
    `run: command \`${command ?? ""}\` not found (check the spelling, give an absolute path, or add its directory to PATH)`,
    EXIT.usage,
  );
}

/**
 * Refuses (exit 2) a file ACP decides by that the agent could change: one in its working directory or a
 * `--writable` path, or reached through a symbolic link there (ACP's home is covered, so its files are fine).
 */
function assertOutOfAgentReach(
  ctx: CliContext,
  home: string,
  writable: readonly string[],
  files: readonly (readonly [what: string, path: string, why: string])[],
): void {
  const roots = agentWritableRoots(ctx.io.cwd, writable);
  const lines = files.flatMap(([what, path, why]) => {
    const holder = agentCanChange(path, roots, home);
    return holder === undefined
      ? []
      : [
          `run: ${what} \`${path}\` lies in \`${holder}\`, which the agent may change (its working directory or a --writable path): it could rewrite ${why} (keep it outside, e.g. in ACP's home \`${home}\`, or run the agent from another directory)`,
        ];
  });
  if (lines.length > 0) throw new CliError(lines.join("\n"), EXIT.usage);
}

/** The `--writable` paths, resolved against the current directory and checked (exit 2 naming each refusal). */
function writablePaths(ctx: CliContext, given: readonly string[], home: string): readonly string[] {
  const checked = checkWritablePaths(
    given.map((p) => resolvePath(ctx.io, p)),
    home,
  );
  if (checked.ok) return checked.paths;
  throw new CliError(checked.issues.map((i) => `run: ${i.message} (${i.help})`).join("\n"), EXIT.usage);
}

/** `--max-processes`: a whole number of at least 1 (exit 2 otherwise). */
function processCap(given: string): number {
  const n = /^[0-9]+$/.test(given) ? Number(given) : NaN;
  if (Number.isSafeInteger(n) && n >= 1) return n;
  throw new CliError(
    `run: --max-processes \`${given}\` is not a whole number of at least 1 (e.g. --max-processes 512)`,
    EXIT.usage,
  );
}

/** `--max-memory`: bytes, or a whole number with K, M, G or T, at least MIN_MAX_MEMORY (exit 2 otherwise). */
function memoryCap(given: string): number {
  const n = parseMemorySize(given);
  if (n !== undefined && n >= MIN_MAX_MEMORY) return n;
  throw new CliError(
    `run: --max-memory \`${given}\` is not a size of at least ${formatMemorySize(MIN_MAX_MEMORY)} (e.g. --max-memory 2G)`,
    EXIT.usage,
  );
}

/** `--max-cpu`: a number of CPUs from MIN_MAX_CPU to MAX_MAX_CPU (exit 2 otherwise). */
function cpuCap(given: string): number {
  const n = parseCpuCount(given);
  if (n !== undefined) return n;
  throw new CliError(
    `run: --max-cpu \`${given}\` is not a number of CPUs from ${MIN_MAX_CPU} to ${MAX_MAX_CPU} (e.g. --max-cpu 1.5)`,
    EXIT.usage,
  );
}

function exitFor(err: SandboxError): ExitCode {
  return err.code === "sandbox_command_not_found" || err.code === "sandbox_invalid_egress" ? EXIT.usage : EXIT.error;
}

function readIntent(ctx: CliContext, file: string): { path: string; sha256: string; value: unknown } {
  const path = resolvePath(ctx.io, file);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new CliError(`--intent: cannot read \`${path}\`: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (err) {
    throw new CliError(yamlErrorText(path, err), EXIT.invalid);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CliError(`${path}: an intent is a mapping (YAML or JSON object)`, EXIT.invalid);
  }
  const compiled = compileIntent(parsed);
  if (!compiled.ok) {
    throw new CliError(`invalid intent:\n${compiled.issues.map((i) => formatIssue(i, path)).join("\n")}`, EXIT.invalid);
  }
  return { path, sha256: `sha256:${createHash("sha256").update(text).digest("hex")}`, value: parsed };
}

/**
 * The config file in use (`--config FILE`, else `$ACP_HOME/config.yml` when it exists), read once: every key
 * `acp proxy` takes from it (checked the same way, `configInUse`), `sandbox.allow_egress` and the caps
 * (`sandbox.max_processes`, `sandbox.max_memory`, `sandbox.max_cpu`). Every problem is named with the file (exit 4) before anything
 * starts.
 */
function loadRunConfig(ctx: CliContext, flag: string | undefined, home: string): RunConfig {
  const path = flag !== undefined ? resolvePath(ctx.io, flag) : join(home, "config.yml");
  const file = readConfigFile(path, flag !== undefined);
  const problems: string[] = [];
  const keys = collectInvalid(problems, () => configInUse(file));
  const allowEgress = collectInvalid(problems, () => sandboxAllowEgress(file)) ?? [];
  const caps = collectInvalid(problems, () => sandboxCaps(file)) ?? {
    maxProcesses: undefined,
    maxMemory: undefined,
    maxCpu: undefined,
  };
  if (keys === undefined || problems.length > 0) throw new CliError(problems.join("\n"), EXIT.invalid);
  return {
    keys,
    proxy: keys.proxy,
    allowEgress,
    caps,
    secretValues: secretsIn(file.values),
  };
}

/** String values under keys that look secret (token, secret, password, key), anywhere in the config. */
function secretsIn(value: unknown, key = ""): string[] {
  if (typeof value === "string") return /token|secret|password|passphrase|key/i.test(key) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap((v) => secretsIn(v, key));
  if (typeof value === "object" && value !== null) {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => secretsIn(v, k));
  }
  return [];
}
