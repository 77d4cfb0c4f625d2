import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createSecureContext } from "node:tls";
import type { Command } from "commander";
import { isLoopbackAddress, servesPlainHttpBeyondLoopback, type ConsentChannel } from "@acp/proxy";
import {
  explainStorageError,
  LINK_TTL_MS,
  openEmbeddedServer,
  removeServeState,
  parsePublicUrl,
  recordForwardedAnswer,
  serveMcpStdio,
  STORAGE_URL_ENV,
  writeServeState,
  type EmbeddedServer,
  type ServerStores,
} from "@acp/server";
import { printError, printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { loadDecisionInputs } from "../decision/load.js";
import { createServePipelines, withTrustedChannelKeys } from "../wiring/serve-policy.js";
import {
  loadKeys,
  loadNamedTokens,
  loadToken,
  loadVaultSecrets,
  TOKEN_SOURCES,
} from "../wiring/serve-start-secrets.js";
import { CliError, EXIT } from "../exit-codes.js";
import { checkChannelKeys, configuredChannels } from "../wiring/config-channels.js";
import { checkTopLevelKeys } from "../wiring/config-in-use.js";
import { readConfigFile, type ConfigFile } from "../wiring/config-file.js";
import { checkServeConfig, pendingShareOf, type ServeConfig } from "../wiring/serve-config.js";
import { checkPlainHttp } from "../wiring/plain-http.js";
import { consoleApproverOf, type ConsoleApprover } from "../wiring/console-approver.js";
import { loadRedactionRules } from "../wiring/redaction-config.js";
import { closeServe, storageConnectWaitMs, waitForStorage } from "../wiring/serve-storage.js";
import { storageOf } from "./storage-url.js";
import { SERVE_HELP_AFTER } from "./serve-help.js";

/** What `acp serve` tells a caller once it listens (tests, and `--json`). */
export interface ServeReady {
  readonly url: string;
  readonly consoleLink: string;
  readonly embedded: EmbeddedServer;
}

/** Seams for tests: when the service is ready, and what stops it (default: SIGINT / SIGTERM). */
export interface ServeHooks {
  readonly onReady?: (ready: ServeReady) => void;
  readonly stopped?: () => Promise<void>;
}

const DEFAULT_HOOKS: ServeHooks = {
  stopped: () =>
    new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    }),
};

interface ServeFlags {
  port?: string;
  bind?: string;
  publicUrl?: string;
  insecurePlainHttp?: boolean;
  policy?: string;
  graph?: string;
  stdio?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  storageUrl?: string;
  storageConnectWait?: string;
  pendingPerCaller?: string;
  acceptMovedDatabase?: boolean;
  consoleAs?: string;
  json?: boolean;
}

/** Registers `acp serve`. */
export function registerServe(parent: Command, ctx: CliContext, hooks: ServeHooks = DEFAULT_HOOKS): void {
  parent
    .command("serve")
    .description(
      "run the decision service: the HTTP API, the MCP tool aana_pre_tool_check and the web console, " +
        "on the policy, consent graph, keys and state of $ACP_HOME",
    )
    .option("--port <port>", "TCP port (default serve.port or 8787; 0 picks a free one)")
    .option(
      "--bind <addr>",
      "address to listen on (default serve.bind or 127.0.0.1; beyond loopback needs a token, and TLS or an " +
        "https --public-url)",
    )
    .option(
      "--public-url <url>",
      "the origin a reverse proxy or load balancer serves this at (https://acp.example.com): links use it, " +
        "its Host is accepted on loopback, an https one makes the console cookie Secure (default serve.public_url)",
    )
    .option(
      "--insecure-plain-http",
      "let --bind beyond loopback serve plain HTTP with no TLS in front: tokens, sign-in links and cookies " +
        "cross the network in clear text (only on a network you trust; default serve.insecure_plain_http)",
    )
    .option(
      "--policy <file>",
      "policy file (default defaults.policy of $ACP_HOME/config.yml, relative to the home, else $ACP_HOME/policy.yml)",
    )
    .option("--graph <file>", "consent graph (default $ACP_HOME/consent-graph.json when it exists)")
    .option("--stdio", "serve only the MCP tool over stdin/stdout (no HTTP)")
    .option(
      "--tls-cert <file>",
      "serve HTTPS with this certificate (PEM; the console cookie is then __Host-, Secure); needs --tls-key",
    )
    .option("--tls-key <file>", "the private key (PEM) of --tls-cert")
    .option(
      "--storage-url <url>",
      `keep the state in PostgreSQL (postgres://user:password@host:5432/db) instead of SQLite; ` +
        `default ${STORAGE_URL_ENV} or storage.url in config.yml`,
    )
    .option(
      "--storage-connect-wait <seconds>",
      "how long to wait at start for a PostgreSQL not accepting connections yet (default storage.connect_wait or 30; 0: no wait)",
    )
    .option(
      "--pending-per-caller <n>",
      "consent requests one caller may have waiting (default serve.pending_per_caller, 250)",
    )
    .option(
      "--accept-moved-database",
      "PostgreSQL: accept that the storage URL now reaches another database than before (moved on purpose), holding it to the old one's audit anchor",
    )
    .option(
      "--console-as <name>",
      "who signs in with the console link printed at start, named as the approver in the audit (default $USER)",
    )
    .option("--json", "print the listening URL and the sign-in link as one JSON object")
    .addHelpText("after", SERVE_HELP_AFTER)
    .action(async (flags: ServeFlags) => {
      await runServe(ctx, flags, hooks);
    });
}

function portOf(flags: ServeFlags, config: ServeConfig): number {
  const raw = flags.port ?? config.port ?? "8787";
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`--port: \`${raw}\` is not a port (0 to 65535; 0 picks a free one)`, EXIT.usage);
  }
  return port;
}

/**
 * config.yml's `serve:` and `storage:` sections, checked the one way `acp doctor` checks them (the values
 * `acp serve` uses: port, bind, decision audit, whether a bearer token is set); `{}` without a file.
 * Stops (exit 4) on an unknown key or a value of the wrong kind.
 */
function serveSections(home: string): { config: ServeConfig; file: ConfigFile | null } {
  const path = join(home, "config.yml");
  if (!existsSync(path)) return { config: {}, file: null };
  const file = readConfigFile(path, true);
  // a misspelt section (`chanel:`, `redactoin:`) or another `version` stops it, as it stops acp proxy (exit 4)
  checkTopLevelKeys(file);
  const checked = checkServeConfig(file.values);
  if (!checked.ok) throw new CliError(`config.yml: ${checked.problems.join("; ")}`, EXIT.invalid);
  // `channel:` and its `telegram:` / `webhook:` section, checked as acp proxy checks them (exit 4)
  checkChannelKeys(file);
  return { config: checked.value, file };
}

/**
 * The consent channels config.yml's `channel:` names (`telegram`, `webhook`; the same sections and sealed
 * secrets as acp proxy), beside the pending table the console, the API and acp approve answer through. A
 * press or callback for a request this node does not hold (another node's, on the same PostgreSQL) is
 * recorded in the table, where the waiting node reads it, keeping the channel it came by.
 */
function consentChannels(
  file: ConfigFile | null,
  seed: Uint8Array | undefined,
  stores: () => ServerStores | undefined,
  clock: () => Date,
  log: (line: string) => void,
): ConsentChannel[] {
  if (file === null) return [];
  const openSeed = (): Promise<Uint8Array> =>
    seed !== undefined
      ? Promise.resolve(seed)
      : Promise.reject(new Error("no keys in $ACP_HOME to open its sealed secret (run `acp init`)"));
  return configuredChannels(file, openSeed, log, async (id, answer, nonce) => {
    const open = stores();
    if (open === undefined) return false;
    const recorded = await recordForwardedAnswer(open.pending, id, answer, nonce, clock());
    if (recorded) open.changes.poke();
    return recorded;
  });
}

/** `--public-url`, else `serve.public_url` (already checked), as its origin; exit 2 for a bad flag. */
function publicUrlOf(flags: ServeFlags, config: ServeConfig): string | undefined {
  if (flags.publicUrl === undefined) return config.publicUrl;
  const parsed = parsePublicUrl(flags.publicUrl);
  if (!parsed.ok) throw new CliError(`--public-url: ${parsed.message}`, EXIT.usage);
  return parsed.value.origin;
}

function readTls(ctx: CliContext, flags: ServeFlags): { key: Buffer; cert: Buffer } | undefined {
  if (flags.tlsCert === undefined && flags.tlsKey === undefined) return undefined;
  if (flags.tlsCert === undefined || flags.tlsKey === undefined) {
    throw new CliError("--tls-cert and --tls-key go together", EXIT.usage);
  }
  const read = (flag: string, file: string): Buffer => {
    try {
      return readFileSync(resolvePath(ctx.io, file));
    } catch (err) {
      throw new CliError(
        `${flag}: cannot read \`${file}\`: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        EXIT.error,
      );
    }
  };
  const pair = { cert: read("--tls-cert", flags.tlsCert), key: read("--tls-key", flags.tlsKey) };
  // checked here, so a bad file is named as such (it failed later as "cannot open the state", exit 1)
  try {
    createSecureContext(pair);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new CliError(
      `--tls-cert \`${flags.tlsCert}\` and --tls-key \`${flags.tlsKey}\` are not a certificate and its private key ` +
        `(${why}): give the PEM certificate (chain) and the unencrypted PEM private key it was issued for`,
      EXIT.error,
    );
  }
  return pair;
}

/** What `acp serve --stdio` started at a terminal says: it waits for an MCP client's messages on stdin. */
export const SERVE_STDIO_AT_A_TERMINAL =
  "serving the MCP tool aana_pre_tool_check on stdin/stdout, which an MCP client speaks: put this command in " +
  "the client's config (`acp docs guides/serve`), or run acp serve without --stdio for HTTP; Ctrl-C stops";

/**
 * Binding beyond loopback without an agents' token: the API would answer anyone who reaches the address (an
 * approvers' token alone does not close it: it asks for no decisions). Exit 2, saying what to set.
 */
function beyondLoopback(bind: string): CliError {
  return new CliError(
    `--bind \`${bind}\` is beyond loopback: set ACP_BRIDGE_TOKEN or serve.bearer_token first (or ` +
      "serve.agent_tokens.NAME; make one with `openssl rand -hex 32`, seal it with `acp config set-secret " +
      "serve.bearer_token`): without an agents' token the API would answer anyone who can reach that address " +
      "(the approvers' token does not close it), or keep --bind 127.0.0.1 behind a reverse proxy (--public-url)",
    EXIT.usage,
  );
}

/**
 * The flags a person can get wrong, checked before the private key is opened: a mistyped flag exits 2 and
 * says so, rather than exit 1 for a passphrase nobody gave (or a prompt for one) first.
 */
function checkFlagsBeforeKeys(ctx: CliContext, flags: ServeFlags, config: ServeConfig): void {
  portOf(flags, config);
  storageConnectWaitMs(flags.storageConnectWait, config.storageConnectWait);
  pendingShareOf(flags.pendingPerCaller, config);
  const publicUrl = publicUrlOf(flags, config);
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) {
    throw new CliError("--tls-cert and --tls-key go together", EXIT.usage);
  }
  const bind = flags.bind ?? config.bind ?? "127.0.0.1";
  const anyToken =
    (ctx.io.env[TOKEN_SOURCES.agents.env] ?? "") !== "" ||
    config.bearerToken !== undefined ||
    config.agentTokens !== undefined;
  if (isLoopbackAddress(bind) || flags.stdio === true) return;
  if (!anyToken) throw beyondLoopback(bind);
  const tls = flags.tlsCert !== undefined || publicUrl?.startsWith("https:") === true;
  checkPlainHttp("serve", {
    bind,
    tls,
    insecurePlainHttp: flags.insecurePlainHttp === true || config.insecurePlainHttp === true,
  });
}

async function runServe(ctx: CliContext, flags: ServeFlags, hooks: ServeHooks): Promise<void> {
  const approver = consoleApproverOf("--console-as", flags.consoleAs, ctx.io.env);
  const home = resolveHome(ctx.io);
  const { config, file } = serveSections(home);
  checkFlagsBeforeKeys(ctx, flags, config);
  // the TLS files too, before the key is opened: a wrong file is said before any passphrase is asked for
  const tls = readTls(ctx, flags);
  const inputs = await loadDecisionInputs(ctx.io, { policy: flags.policy, graph: flags.graph });
  const { keys, seed } = await loadKeys(ctx, home, flags.stdio === true);
  const token = loadToken(ctx, home, config, seed, "agents");
  const approverToken = loadToken(ctx, home, config, seed, "approvers");
  const agentTokens = loadNamedTokens(home, "agent_tokens", config.agentTokens, seed);
  const approverTokens = loadNamedTokens(home, "approver_tokens", config.approverTokens, seed);
  const trustedKeys = loadNamedTokens(home, "trusted_channel_keys", config.trustedChannelKeys, seed);
  const agentSide = [token, ...Object.values(agentTokens ?? {})];
  if (approverToken !== undefined && agentSide.includes(approverToken)) {
    throw new CliError(
      "the approvers' token (ACP_APPROVER_TOKEN or serve.approver_token) is an agents' token: give " +
        "approvers a token of their own (`openssl rand -hex 32`), or an agent holding it could approve its own requests",
      EXIT.invalid,
    );
  }
  const everyToken = [...agentSide, approverToken, ...Object.values(approverTokens ?? {})].filter(
    (t) => t !== undefined,
  );
  if (new Set(everyToken).size !== everyToken.length) {
    throw new CliError(
      "config.yml: serve: one token is given twice (agents' and approvers' tokens, named or not): give every " +
        "agent and every approver a token of its own (`openssl rand -hex 32`)",
      EXIT.invalid,
    );
  }
  const vaultSecrets = loadVaultSecrets(home, seed);
  const redaction = loadRedactionRules(home);
  const bind = flags.bind ?? config.bind ?? "127.0.0.1";
  const loopbackOnly = isLoopbackAddress(bind);
  if (!loopbackOnly && token === undefined && agentTokens === undefined && flags.stdio !== true) {
    throw beyondLoopback(bind);
  }
  const publicUrl = publicUrlOf(flags, config);
  const port = portOf(flags, config);
  const log = (line: string): void => printError(ctx, `acp serve: ${line}`);
  const storage = storageOf(ctx, flags, home);
  const storageWait = storageConnectWaitMs(flags.storageConnectWait, config.storageConnectWait);
  const decisionAudit = config.decisionAudit;
  let embedded: EmbeddedServer | undefined;
  const channels = consentChannels(file, seed, () => embedded?.stores, ctx.io.now, log);
  for (const channel of channels) log(`consent requests also go to ${channel.name} (config.yml channel:)`);
  try {
    // a database started with the node: wait for it (each retry said), fail at once if it refuses
    if (storage !== null) await waitForStorage(storage, storageWait, log);
    embedded = await openEmbeddedServer({
      statePath: join(home, "state.db"),
      auditPath: join(home, "audit.jsonl"),
      ...(storage !== null ? { storageUrl: storage.url, acceptMovedDatabase: flags.acceptMovedDatabase === true } : {}),
      // the policy file is picked up again when it changes; a reload is recorded in this node's chain
      ...createServePipelines(withTrustedChannelKeys(inputs, trustedKeys), {
        log,
        audit: () => embedded?.stores.auditLog,
      }),
      keys,
      clock: ctx.io.now,
      loopbackOnly,
      log,
      redaction,
      secrets: () => vaultSecrets,
      onStoreError: (err) => log(`storage: ${err.message}`),
      ...(decisionAudit !== undefined ? { decisionAudit } : {}),
      ...(config.callerBudget !== undefined ? { callerBudget: config.callerBudget } : {}),
      ...pendingShareOf(flags.pendingPerCaller, config),
      ...(token !== undefined ? { token } : {}),
      ...(approverToken !== undefined ? { approverToken } : {}),
      ...(agentTokens !== undefined ? { agentTokens } : {}),
      ...(config.agentServers !== undefined ? { agentServers: config.agentServers } : {}),
      ...(approverTokens !== undefined ? { approverTokens } : {}),
      ...(publicUrl !== undefined ? { publicUrl } : {}),
      ...(tls !== undefined ? { tls } : {}),
      ...(channels.length > 0 ? { extraChannels: channels } : {}),
    });
  } catch (err) {
    if (storage !== null) throw new CliError(explainStorageError(err, storage), EXIT.error);
    throw new CliError(
      `cannot open the state in \`${home}\`: ${err instanceof Error ? err.message : String(err)}`,
      EXIT.error,
    );
  }
  try {
    if (flags.stdio === true) {
      // run by hand at a terminal, it would sit silent waiting for JSON-RPC: say what it is for
      if (ctx.io.stdinIsTTY) log(SERVE_STDIO_AT_A_TERMINAL);
      await (
        await serveMcpStdio(embedded.server.service, { stdin: process.stdin, stdout: process.stdout }, log)
      ).closed;
      return;
    }
    await listenAndWait(ctx, flags, hooks, {
      embedded,
      home,
      port,
      bind,
      agentToken: token !== undefined || agentTokens !== undefined,
      approverToken: approverToken !== undefined || approverTokens !== undefined,
      publicUrl,
      log,
      approver,
    });
  } finally {
    await closeServe(embedded, storage, home);
  }
}

async function listenAndWait(
  ctx: CliContext,
  flags: ServeFlags,
  hooks: ServeHooks,
  run: {
    embedded: EmbeddedServer;
    home: string;
    port: number;
    bind: string;
    /** Whether an agents' token (anonymous or named) closes the API to callers without one. */
    agentToken: boolean;
    /** Whether an approvers' token is configured. */
    approverToken: boolean;
    /** The public URL (a reverse proxy in front), checked. */
    publicUrl: string | undefined;
    log: (l: string) => void;
    approver: ConsoleApprover;
  },
): Promise<void> {
  let url: string;
  try {
    url = await run.embedded.server.listen({ port: run.port, host: run.bind });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const hint =
      code === "EADDRINUSE"
        ? " (the port is already in use: another acp serve? pick another with --port, or --port 0 for a free one)"
        : code === "EADDRNOTAVAIL"
          ? " (no interface of this machine has that address: check --bind)"
          : code === "EACCES"
            ? " (ports below 1024 need privileges: pick one above with --port)"
            : "";
    throw new CliError(`cannot listen on ${run.bind}:${run.port}: ${code ?? String(err)}${hint}`, EXIT.error);
  }
  const localUrl =
    run.bind === "0.0.0.0" || run.bind === "::" ? url.replace(/\/\/[^:]+:|\/\/\[[^\]]+\]:/, "//127.0.0.1:") : url;
  try {
    writeServeState(run.home, {
      url: localUrl,
      ...(run.publicUrl !== undefined ? { public_url: run.publicUrl } : {}),
      pid: process.pid,
      started_at: ctx.io.now().toISOString(),
      storage: run.embedded.stores.kind,
    });
  } catch (err) {
    // on PostgreSQL nothing before needed the home written (a read-only or missing home): say what it is for
    const code = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
    throw new CliError(
      `cannot write serve.json in the home \`${run.home}\` (${code}): acp serve keeps it there for acp ` +
        "console-link, and on PostgreSQL its audit anchor on the chain too; give it a writable home (run " +
        "`acp init` there, or copy a node's home)",
      EXIT.error,
    );
  }
  try {
    const named = "name" in run.approver ? run.approver.name : undefined;
    if ("unusableDefault" in run.approver) {
      run.log(`the console link signs in unnamed (approver \`console\`): ${run.approver.unusableDefault}`);
    }
    const token = await run.embedded.stores.consoleAuth.createLink(ctx.io.now().getTime(), LINK_TTL_MS, named);
    const consoleLink = `${run.publicUrl ?? localUrl}/console/login?token=${token}`;
    const { kind, location } = run.embedded.stores;
    if (flags.json === true) {
      printJson(ctx, {
        url,
        // on every interface (0.0.0.0, ::) the address to call it at from this machine; else `url`
        local_url: localUrl,
        public_url: run.publicUrl ?? null,
        console_link: consoleLink,
        mcp: `${localUrl}/mcp`,
        docs: `${localUrl}/docs`,
        storage: { kind, location },
        console_approver: named ?? null,
      });
    } else {
      // 0.0.0.0 is no address to open (browsers refuse it): the links name this machine's loopback
      const every = localUrl === url ? "" : `every interface; on this machine ${localUrl}: `;
      printLine(ctx, `acp serve: listening on ${url} (${every}API docs ${localUrl}/docs, MCP ${localUrl}/mcp)`);
      if (run.publicUrl !== undefined) printLine(ctx, `acp serve: public URL ${run.publicUrl}`);
      printLine(ctx, `acp serve: state in ${kind === "postgres" ? `PostgreSQL ${location}` : location}`);
      const who = named === undefined ? "" : `, signs in as ${named}`;
      printLine(ctx, `acp serve: console sign-in link (one use, 15 minutes${who}): ${consoleLink}`);
    }
    // notes on stderr, with --json too: a script reads stdout, its operator still sees these
    if (!run.agentToken) run.log("no bearer token configured: the API answers loopback callers only");
    if (!run.approverToken) {
      run.log(
        "no approvers' token (ACP_APPROVER_TOKEN) configured: consent is answered in the console, with acp approve or a channel, not over the API",
      );
    }
    if (run.publicUrl?.startsWith("https:") === true && !url.startsWith("https:")) {
      run.log(
        `TLS ends in front of this service (public URL ${run.publicUrl}): keep the hop from the proxy to ` +
          `${run.bind} on this machine or a private network`,
      );
    } else if (servesPlainHttpBeyondLoopback({ bind: run.bind, tls: url.startsWith("https:") })) {
      run.log(
        `warning: serving on ${run.bind} without TLS: the bearer token, console sign-in links and session ` +
          "cookies cross the network in clear text; use --tls-cert/--tls-key or a TLS-terminating proxy",
      );
    }
    hooks.onReady?.({ url, consoleLink, embedded: run.embedded });
    await (hooks.stopped ?? DEFAULT_HOOKS.stopped ?? (() => Promise.resolve()))();
  } finally {
    removeServeState(run.home);
  }
}
