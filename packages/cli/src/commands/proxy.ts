import { basename, join } from "node:path";
import { Option, type Command } from "commander";
import { parse as parseYaml } from "yaml";
import { compileIntent, formatIssue, yamlErrorText, type ClassificationOverride } from "@acp/core";
import {
  createDefaultBroker,
  createDefaultDecide,
  createFilePinStore,
  createProxy,
  isLoopbackAddress,
  listenHttp,
  parsePublicUrl,
  plainHttpRefusal,
  refusesPlainHttp,
  servesPlainHttpBeyondLoopback,
  serveStdio,
  UPSTREAM_RESTART,
  type AuditSink,
  type CallObserver,
  type CredentialHook,
  type PlanHook,
  type ConsentAgentInfo,
  type ConsentBroker,
  type Decide,
  type PrefixMode,
  type ProxyConfig,
  type PublicUrl,
} from "@acp/proxy";
import { resolveHome, resolvePath, type CliContext } from "../context.js";
import { resolvePolicyPath } from "../wiring/policy-path.js";
import { loadMasterSeed, readConfigSecret } from "@acp/store";
import { PASSPHRASE_ENV } from "../home-access/secret-input.js";
import { checkBearerToken } from "../wiring/bearer-token.js";
import { readConfigFile } from "../wiring/config-file.js";
import { configInUse, type ConfigInUse } from "../wiring/config-in-use.js";
import { assertCredentialsFit } from "../wiring/credentials.js";
import { CliError, EXIT } from "../exit-codes.js";
import { listenForStopSignals } from "../stop-signals.js";
import { upstreamsOf } from "../wiring/upstream-flags.js";
import { readInputFileSync } from "../decision/read-input.js";
import type { HomeSecrets } from "../wiring/home-secrets.js";

/**
 * What every wiring part is given: the home (keys, vault, state, audit) and the config file in use, read
 * and checked once (`--config FILE`, else `$ACP_HOME/config.yml`). Without `config` the wiring reads the
 * home's config.yml itself.
 */
export interface WiringOptions {
  readonly home: string;
  readonly config?: ConfigInUse;
}

/** What `acp proxy` plugs into the proxy: the integrator replaces these defaults with the real pipeline. */
export interface ProxyWiring {
  readonly createDecide: (
    options: WiringOptions & {
      readonly policyPath?: string;
      /**
       * The policy file is the home's own policy.yml, missing, and named by neither --policy nor
       * defaults.policy (`resolvePolicyPath`): only then is the built-in starter policy used.
       */
      readonly policyIsDefault?: boolean;
      /** The session runtime's intent (`--intent`), already read; absent: an open intent. */
      readonly intent?: unknown;
      /** Upstreams marked `trusted: true`: their results are not untrusted content. */
      readonly trustedServers?: readonly string[];
    },
  ) => Decide & { readonly recheckEdits?: Decide; readonly classify?: () => readonly ClassificationOverride[] };
  /** Injects vault credentials into accepted calls (the config file's `credentials:`). */
  readonly createCredentials?: (options: WiringOptions) => CredentialHook | undefined;
  /** `acp_submit_plan` for the agent (the session runtime validates, a person approves). */
  readonly createPlans?: (options: WiringOptions) => PlanHook | undefined;
  /** Sees executed calls and results (the session runtime's provenance). */
  readonly createObserver?: (options: WiringOptions) => CallObserver | undefined;
  /**
   * `agent`: the §4.1 agent of the consent requests whose call names none (`acp run` knows the command it
   * started); absent, a request names the agent its client says it is, and an `unknown` command.
   */
  readonly createBroker: (options: WiringOptions & { readonly agent?: ConsentAgentInfo }) => ConsentBroker;
  readonly createAudit: (options: WiringOptions) => AuditSink;
  /**
   * The plain values of the home's secrets (vault, sealed config values), opened with the key the wiring
   * already opens for the rest (`acp run` keeps any variable holding one from the agent); absent: none.
   */
  readonly createSecretValues?: (options: WiringOptions) => Promise<HomeSecrets>;
  /** Releases what the wiring opened (audit log with its final checkpoint, state.db, channels). */
  readonly close?: () => Promise<void>;
}

/**
 * A fail-closed stand-in for tests that register `acp proxy` without a wiring: refuse-all decide, deny-all
 * broker, no audit. The `acp` program always passes the real one (`createProxyWiring`).
 */
export const DEFAULT_PROXY_WIRING: ProxyWiring = {
  createDecide: (options) => createDefaultDecide(options),
  createBroker: () => createDefaultBroker(),
  createAudit: () => ({ record: () => undefined }),
};

interface ProxyFlags {
  upstream?: string[];
  name?: string[];
  trust?: string[];
  http?: string | boolean;
  bind?: string;
  publicUrl?: string;
  insecurePlainHttp?: boolean;
  config?: string;
  policy?: string;
  acceptToolChanges?: boolean;
  prefixTools?: PrefixMode;
  callTimeout?: string;
  callMax?: string;
  startWait?: string;
  intent?: string;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * Said on stderr every time `acp proxy` starts (consent protocol §9.2: the agent should be network-isolated,
 * and ACP must warn when it is not). `acp run -- AGENT` is the mode that isolates.
 */
export const PROXY_ONLY_WARNING =
  "warning: acp proxy does not sandbox the agent: unless you isolated it yourself, it can reach the network and this ACP home without passing the proxy (run it with `acp run -- AGENT` to isolate it)";

/** Registers `acp proxy`. */
export function registerProxy(parent: Command, ctx: CliContext, wiring: ProxyWiring = DEFAULT_PROXY_WIRING): void {
  parent
    .command("proxy")
    .description(
      "run the MCP proxy in front of one or more upstream MCP servers: every tools/call is decided " +
        "accept / ask / defer / refuse before it reaches the server (stdio by default, HTTP with --http)",
    )
    .option(
      "-u, --upstream <cmd-or-url>",
      "an upstream server: a command (stdio) or an http(s) URL; repeatable",
      collect,
    )
    .option(
      "-n, --name <name>",
      "name of the matching --upstream (in order: one for each, or none); default from the command",
      collect,
    )
    .option(
      "--trust <name>",
      "take the upstream named so as trusted, as `trusted: true` in proxy.upstream_servers does: its results count " +
        "as your own word and its readOnlyHint makes a tool a read; repeatable",
      collect,
    )
    .option(
      "--http [port]",
      "serve HTTP (streamable HTTP at /mcp, HTTP+SSE at /sse) instead of stdio; port default proxy.port, else 8443",
    )
    .option(
      "--bind <addr>",
      "address for --http (default proxy.bind, else 127.0.0.1; beyond loopback needs a bearer token, and an " +
        "https --public-url or --insecure-plain-http)",
    )
    .option(
      "--public-url <url>",
      "for --http behind a reverse proxy: the origin it serves this at (https://mcp.example.com); a loopback " +
        "listener then also takes its Host and Origin (default proxy.public_url)",
    )
    .option(
      "--insecure-plain-http",
      "let --http listen beyond loopback with no TLS in front: the token and every call cross the network in " +
        "clear text (only on a network you trust; default proxy.insecure_plain_http)",
    )
    .option(
      "--config <file>",
      "the config file every setting comes from (default $ACP_HOME/config.yml when it exists; secrets stay in the home)",
    )
    .option(
      "--policy <file>",
      "policy file (default defaults.policy of the config file, relative to the home, else $ACP_HOME/policy.yml)",
    )
    .option(
      "--intent <file>",
      "the intent every session runs under (YAML or JSON; see `acp docs reference/session-runtime`)",
    )
    .option("--accept-tool-changes", "accept changed tool definitions (re-pin) instead of holding them behind ask")
    .addOption(
      new Option(
        "--prefix-tools <mode>",
        "when tool names get the `server__` prefix (default proxy.prefix_tools, else on-collision)",
      ).choices(["on-collision", "always", "never"]),
    )
    .option(
      "--call-timeout <seconds>",
      "upper bound on one upstream call (default proxy.call_timeout_seconds, else 60; progress resets it)",
    )
    .option(
      "--call-max <seconds>",
      "upper bound on one upstream call however much progress it sends (default proxy.call_max_seconds, else 3600)",
    )
    .option(
      "--start-wait <seconds>",
      "with several upstreams, how long to wait for them all before serving those up; the rest join when up (default proxy.start_wait_seconds, else 10)",
    )
    .addHelpText(
      "after",
      `
Examples:
  acp proxy --upstream 'npx -y @modelcontextprotocol/server-filesystem /tmp'
  acp proxy -u 'npx -y @modelcontextprotocol/server-memory' -u http://127.0.0.1:3001/mcp -n memory -n github
  acp proxy -u 'npx -y @modelcontextprotocol/server-everything' --trust server-everything   # its readOnlyHint counts
  acp proxy --http 8443 --config ~/.acp/config.yml
  acp proxy --http 8443 --public-url https://mcp.example.com   # on 127.0.0.1 behind a reverse proxy
  ACP_PROXY_TOKEN="$(openssl rand -hex 32)" acp proxy --http 8443 --bind 0.0.0.0 --public-url https://mcp.example.com
                                                                # a token (16+ characters); TLS ends at the proxy in front

Beyond loopback the proxy, which speaks plain HTTP, needs a bearer token and TLS in front of it: an https://
--public-url says a proxy ends TLS there; without one it does not start, unless --insecure-plain-http (or
proxy.insecure_plain_http: true) accepts that the token and every call cross the network in clear text.

Tokens over HTTP: seal the one every client sends with \`acp config set-secret proxy.bearer_token\`
(ACP_PROXY_TOKEN takes precedence), and give agents tokens of their own with \`acp config set-secret
proxy.agent_tokens.NAME\`: a session opened with one is NAME's (decided and audited as NAME, whatever the
client calls itself) and only that token may use it. Sealed tokens open with ACP_PASSPHRASE. Each agent
(sessions without a token of their own together) has a share of the policy work: once its calls have spent
it (requests built to exhaust a decision's work budget), they are refused unjudged, caller_budget_exhausted
(proxy.caller_budget: units, seconds; default 33554432 units back over 60 s). A session has at most 64
tools/calls in flight (being decided or forwarded) at once; one more is refused at once, too_many_calls_in_flight
(proxy.max_calls_in_flight).

Drop-in for an MCP client config ("mcpServers" in Claude Desktop, Cursor, VS Code):
  "filesystem": { "command": "acp", "args": ["proxy", "--upstream", "npx -y @modelcontextprotocol/server-filesystem /tmp"],
                  "env": { "ACP_PASSPHRASE": "…" } }
The passphrase of \`acp init\` lets the proxy sign approvals: a client gives it no terminal to ask at.

A call is judged by its tool's name (read_*, send_*, … unknown names as writes) and the policy's classify:.
A server's own annotations may make it stricter; its readOnlyHint makes a tool a read only for a server
marked trusted: true in proxy.upstream_servers, or named by --trust (MCP: annotations are untrusted unless
the server is).

In stdio mode stdout carries MCP; every log line goes to stderr. Guide: acp docs guides/proxy

Exit codes: 0 the client went away (or SIGINT/SIGTERM), 1 every upstream failed to start / the port or
the --config file cannot be used / --bind beyond loopback without a token, or over plain HTTP (no https
--public-url, no --insecure-plain-http or proxy.insecure_plain_http), 2 usage (no upstream, shell
syntax in --upstream or an address not http(s), a --name used twice, a bad --http port, --public-url not an origin), 4 the config file, policy, consent graph
or --intent does not validate, or a token is not a bearer token, does not open, or is given twice.`,
    )
    .action(async (flags: ProxyFlags) => {
      await runProxy(ctx, flags, wiring);
    });
}

/** The HTTP listener's tokens: the shared one (any client) and the ones that name their agent. */
interface ProxyTokens {
  readonly shared?: string;
  readonly agents: ReadonlyMap<string, string>;
}

/**
 * `ACP_PROXY_TOKEN` (checked like `proxy.bearer_token`), else the config's token (plain, or sealed with
 * `acp config set-secret proxy.bearer_token`), and every `proxy.agent_tokens.NAME` (sealed). Sealed values
 * open with the home's key (`ACP_PASSPHRASE`). Every token checked as a bearer token and distinct (exit 4).
 */
function proxyTokens(ctx: CliContext, home: string, keys: ConfigInUse): ProxyTokens {
  const config = keys.proxy;
  const { document: doc, path: file } = keys.file;
  let seed: Uint8Array | undefined;
  const open = (path: string): string | undefined => {
    if (doc === null) return undefined;
    if (seed === undefined) {
      const passphrase = ctx.io.env[PASSPHRASE_ENV];
      const loaded = loadMasterSeed(home, passphrase === "" ? undefined : passphrase);
      if (!loaded.ok) {
        throw new CliError(
          `${file}: \`${path}\` is sealed and needs the home's key to open: ${loaded.issues[0]?.message ?? "cannot open keys/private.key"} (set ${PASSPHRASE_ENV})`,
          EXIT.invalid,
        );
      }
      seed = loaded.value;
    }
    const secret = readConfigSecret(doc, path, seed, basename(file));
    if (!secret.ok) {
      // a file other than the home's config.yml is named in the message already
      const where = basename(file) === "config.yml" ? `${file}: ` : "";
      throw new CliError(`${where}${secret.issues[0]?.message ?? `\`${path}\` is unreadable`}`, EXIT.invalid);
    }
    return secret.value === undefined ? undefined : checkBearerToken(`${file}: \`${path}\``, secret.value);
  };
  try {
    const fromEnv = ctx.io.env["ACP_PROXY_TOKEN"];
    const shared =
      fromEnv !== undefined && fromEnv !== ""
        ? checkBearerToken("ACP_PROXY_TOKEN", fromEnv)
        : config.bearerTokenSealed === true
          ? open("proxy.bearer_token")
          : config.bearerToken;
    const agents = new Map<string, string>();
    for (const name of config.agentTokenNames ?? []) {
      const token = open(`proxy.agent_tokens.${name}`);
      if (token !== undefined) agents.set(name, token);
    }
    const every = [shared, ...agents.values()].filter((t) => t !== undefined);
    if (new Set(every).size !== every.length) {
      throw new CliError(
        `${file}: one token is given twice (proxy.bearer_token or ACP_PROXY_TOKEN, proxy.agent_tokens): give every agent a token of its own (\`openssl rand -hex 32\`)`,
        EXIT.invalid,
      );
    }
    return { ...(shared !== undefined && shared !== "" ? { shared } : {}), agents };
  } finally {
    seed?.fill(0);
  }
}

async function runProxy(ctx: CliContext, flags: ProxyFlags, wiring: ProxyWiring): Promise<void> {
  const home = resolveHome(ctx.io);
  const { config, keys } = loadConfig(ctx, flags.config, home);
  const port = httpPort(flags, config);
  // the tokens are only read (and checked) when the proxy listens over HTTP
  const tokens = port === undefined ? undefined : proxyTokens(ctx, home, keys);
  const bind = flags.bind ?? config.bind;
  if (tokens !== undefined && !isLoopbackAddress(bind) && tokens.shared === undefined && tokens.agents.size === 0) {
    // checked before any upstream starts (listenHttp refuses it too)
    throw new CliError(
      `refusing to listen on \`${bind}\` without a bearer token (set proxy.bearer_token or ACP_PROXY_TOKEN)`,
      EXIT.error,
    );
  }
  // a bad --public-url is a usage error before any upstream starts
  const publicUrl = port === undefined ? undefined : publicUrlOf(flags, config);
  const insecurePlainHttp = flags.insecurePlainHttp === true || config.insecurePlainHttp === true;
  if (port !== undefined && refusesPlainHttp({ bind, tls: publicUrl?.https === true, insecurePlainHttp })) {
    // checked before any upstream starts (listenHttp refuses it too): tokens and calls would cross in clear text
    throw new CliError(plainHttpRefusal(bind), EXIT.error);
  }
  const upstreams = upstreamsOf(flags, config.upstreams);
  if (upstreams.length === 0) {
    throw new CliError(
      "no upstream servers: pass --upstream CMD_OR_URL or set proxy.upstream_servers in config.yml",
      EXIT.usage,
    );
  }
  // before anything starts: a credential with no `server` would reach every one of several upstreams
  assertCredentialsFit(keys.credentials, upstreams);
  const log = (line: string): void => void ctx.io.stderr.write(`acp proxy: ${line}\n`);
  const policy = resolvePolicyPath(ctx.io, home, flags.policy, keys.file);
  const intent = flags.intent !== undefined ? readIntentFile(resolvePath(ctx.io, flags.intent)) : undefined;
  const trustedServers = upstreams.filter((u) => u.trusted === true).map((u) => u.name);
  const decide = wiring.createDecide({
    policyPath: policy.path,
    policyIsDefault: policy.isDefault,
    home,
    config: keys,
    trustedServers,
    ...(intent !== undefined ? { intent } : {}),
  });
  // consent protocol §9.2: the agent should be network-isolated, and ACP must warn when it is not. `acp proxy`
  // is the protocol's proxy-only mode: the agent is whatever started it, outside any sandbox of ours. Said once
  // the policy and the intent are read (a proxy refused before it starts says only why), before any upstream
  log(PROXY_ONLY_WARNING);
  const observer = wiring.createObserver?.({ home, config: keys });
  const credentials = wiring.createCredentials?.({ home, config: keys });
  const plans = wiring.createPlans?.({ home, config: keys });
  const proxy = createProxy({
    upstreams,
    decide,
    ...(decide.recheckEdits !== undefined ? { recheckEdits: decide.recheckEdits } : {}),
    ...(decide.classify !== undefined ? { classify: decide.classify } : {}),
    ...(observer !== undefined ? { observer } : {}),
    ...(credentials !== undefined ? { credentials } : {}),
    ...(plans !== undefined ? { plans } : {}),
    broker: wiring.createBroker({ home, config: keys }),
    audit: wiring.createAudit({ home, config: keys }),
    pinStore: createFilePinStore(join(home, "pins.json")),
    acceptToolChanges: flags.acceptToolChanges === true,
    prefixTools: flags.prefixTools ?? config.prefixTools,
    ...callBounds(
      seconds(flags.callTimeout, "--call-timeout") ?? config.callTimeoutMs,
      seconds(flags.callMax, "--call-max"),
      config.callMaxMs,
    ),
    startWaitMs: seconds(flags.startWait, "--start-wait") ?? config.startWaitMs,
    ...(config.restartUpstreams ? { restartUpstreams: UPSTREAM_RESTART } : {}),
    consentTimeoutMs: config.consentTimeoutMs,
    ...(config.maxCallsInFlight !== undefined ? { maxCallsInFlight: config.maxCallsInFlight } : {}),
    now: ctx.io.now,
    log,
  });
  await proxy.start();
  if (proxy.upstreams().every((u) => u.status !== "connected")) {
    await proxy.close();
    throw new CliError("every upstream server failed to start (see the lines above)", EXIT.error);
  }
  try {
    if (port !== undefined && tokens !== undefined)
      await serveHttp(proxy, { port, tokens, bind, publicUrl, insecurePlainHttp }, config, log);
    else {
      // run by hand at a terminal, a stdio proxy would sit silent waiting for JSON-RPC: say what it is for
      if (ctx.io.stdinIsTTY) log(STDIO_AT_A_TERMINAL);
      await untilClosedOrSignalled((await serveStdio(proxy)).closed);
    }
  } finally {
    // told to stop while closing (an MCP client sends SIGTERM 2 s after closing stdin, while an upstream may
    // still be ending): the servers are stopped at once rather than left running after the proxy; told twice,
    // the proxy ends at once, as without the handler (a close that hangs never makes it unkillable)
    const stop = listenForStopSignals();
    stop.signal.addEventListener("abort", () => proxy.pool.signalAll("SIGTERM"));
    try {
      await proxy.close();
      await wiring.close?.();
    } finally {
      stop.dispose();
    }
  }
}

/** What a stdio proxy started at a terminal says: it waits for an MCP client's messages on stdin. */
export const STDIO_AT_A_TERMINAL =
  "serving MCP on stdin/stdout, which an MCP client speaks: put this command in the client's config " +
  '("mcpServers", `acp docs guides/proxy`), or serve HTTP with --http PORT; Ctrl-C stops';

/**
 * Stdio mode ends when the client closes stdin, or on SIGINT/SIGTERM: then stdin is let go, and the caller
 * closes the proxy and the wiring, which flushes the audit queue (accepted calls' events are group-committed,
 * docs/reference/audit.md) and writes the final checkpoint before the process exits.
 */
async function untilClosedOrSignalled(closed: Promise<void>): Promise<void> {
  let onSignal = (): void => undefined;
  const signalled = new Promise<void>((resolve) => {
    onSignal = () => {
      process.stdin.destroy();
      resolve();
    };
  });
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await Promise.race([closed, signalled]);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

function readIntentFile(path: string): unknown {
  const text = readInputFileSync(path, "intent");
  let intent: unknown;
  try {
    intent = parseYaml(text, { maxAliasCount: 100 }) as unknown;
  } catch (err) {
    throw new CliError(`--intent: ${yamlErrorText(path, err, "not YAML or JSON")}`, EXIT.invalid);
  }
  const compiled = compileIntent(intent);
  if (!compiled.ok) {
    throw new CliError(`invalid intent:\n${compiled.issues.map((i) => formatIssue(i, path)).join("\n")}`, EXIT.invalid);
  }
  return intent;
}

/** The `--http` port, checked before any upstream starts; undefined in stdio mode. */
function httpPort(flags: ProxyFlags, config: ProxyConfig): number | undefined {
  if (flags.http === undefined || flags.http === false) return undefined;
  const port = typeof flags.http === "string" ? Number(flags.http) : (config.port ?? 8443);
  if (typeof flags.http === "string" && !/^\d+$/.test(flags.http.trim())) {
    throw new CliError(`--http: \`${flags.http}\` is not a port (0 to 65535)`, EXIT.usage);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`--http: \`${String(flags.http)}\` is not a port (0 to 65535)`, EXIT.usage);
  }
  return port;
}

/** The HTTP listener's settings, each read once from flags and config before any upstream starts. */
interface HttpSettings {
  readonly port: number;
  readonly tokens: ProxyTokens;
  readonly bind: string;
  readonly publicUrl: PublicUrl | undefined;
  readonly insecurePlainHttp: boolean;
}

async function serveHttp(
  proxy: ReturnType<typeof createProxy>,
  { port, tokens, bind, publicUrl, insecurePlainHttp }: HttpSettings,
  config: ProxyConfig,
  log: (line: string) => void,
): Promise<void> {
  let listener;
  try {
    listener = await listenHttp(proxy, {
      port,
      bind,
      ...(tokens.shared !== undefined ? { bearerToken: tokens.shared } : {}),
      ...(tokens.agents.size > 0 ? { agentTokens: tokens.agents } : {}),
      ...(publicUrl !== undefined ? { publicUrl } : {}),
      ...(insecurePlainHttp ? { insecurePlainHttp: true } : {}),
      ...(config.maxSessions !== undefined ? { maxSessions: config.maxSessions } : {}),
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new CliError(`${message}${listenHint(message)}`, EXIT.error);
  }
  if (tokens.agents.size > 0) {
    log(
      `agents with a token of their own: ${[...tokens.agents.keys()].join(", ")}` +
        (tokens.shared === undefined ? " (no shared token: every client needs one of these)" : ""),
    );
  }
  if (servesPlainHttpBeyondLoopback({ bind, tls: publicUrl?.https === true })) {
    // the proxy speaks plain HTTP: beyond loopback its bearer tokens and every call cross the network readable
    log(
      `warning: serving on ${bind} without TLS: the bearer token and every call and result cross the network in ` +
        "clear text (--insecure-plain-http); put a TLS-terminating proxy in front and give its origin with " +
        "--public-url https://…",
    );
  }
  log(`listening on ${listener.url}/mcp (streamable HTTP) and ${listener.url}/sse (HTTP+SSE)`);
  if (publicUrl !== undefined) log(`public URL ${publicUrl.origin}/mcp (its Host and Origin are taken)`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await listener.close();
}

/** What to do about a listener that could not be opened, as `acp serve` says it: by the error's code. */
function listenHint(message: string): string {
  if (message.endsWith("EADDRINUSE"))
    return " (the port is already in use: another acp proxy? pick another with --http PORT, or --http 0 for a free one)";
  if (message.endsWith("EADDRNOTAVAIL")) return " (no interface of this machine has that address: check --bind)";
  if (message.endsWith("EACCES")) return " (ports below 1024 need privileges: pick one above with --http PORT)";
  return "";
}

/** `--public-url`, else `proxy.public_url` (checked with the config); exit 2 for a bad flag. */
function publicUrlOf(flags: ProxyFlags, config: ProxyConfig): PublicUrl | undefined {
  if (flags.publicUrl === undefined) return config.publicUrl;
  const parsed = parsePublicUrl(flags.publicUrl);
  if (!parsed.ok) throw new CliError(`--public-url: ${parsed.message}`, EXIT.usage);
  return parsed.value;
}

/**
 * The config file in use (`--config FILE`, else `$ACP_HOME/config.yml` when it exists), read once: its
 * `proxy:` section and every other key the proxy uses (`keys`: redaction, credentials, session, graph,
 * channel), all checked before anything starts (exit 4, every problem named with the file).
 */
function loadConfig(
  ctx: CliContext,
  flag: string | undefined,
  home: string,
): { config: ProxyConfig; keys: ConfigInUse } {
  const path = flag !== undefined ? resolvePath(ctx.io, flag) : join(home, "config.yml");
  const keys = configInUse(readConfigFile(path, flag !== undefined));
  return { config: keys.proxy, keys };
}

function seconds(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n > 0) || !Number.isFinite(n))
    throw new CliError(`${flag}: \`${value}\` is not a positive number of seconds`, EXIT.usage);
  return Math.round(n * 1000);
}

/**
 * The per-call timeout and the total bound: a `--call-max` below the timeout is a usage error; a
 * `--call-timeout` above the configured total raises the total with it (the flag asked for that long).
 */
function callBounds(
  callTimeoutMs: number,
  flagMaxMs: number | undefined,
  configMaxMs: number,
): { callTimeoutMs: number; callMaxMs: number } {
  if (flagMaxMs !== undefined && flagMaxMs < callTimeoutMs) {
    throw new CliError("--call-max must be at least the call timeout (--call-timeout, default 60)", EXIT.usage);
  }
  return { callTimeoutMs, callMaxMs: flagMaxMs ?? Math.max(configMaxMs, callTimeoutMs) };
}
