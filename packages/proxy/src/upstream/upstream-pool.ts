import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ErrorCode,
  McpError,
  ResultSchema,
  ToolSchema,
  type JSONRPCRequest,
  type Notification,
  type Result,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { DECISION_META_KEY } from "../gate/tool-error.js";
import { connectUpstream, scrubCredentials } from "./connect-upstream.js";
import { budgetLines, DEFAULT_LINE_BURST, DEFAULT_LINES_PER_SECOND } from "./line-budget.js";
import type { UpstreamCredentials, UpstreamSpec } from "./upstream-spec.js";
import type { RelayedRequest, UpstreamRelay } from "./upstream-relay.js";
import { whyItemNameRefused } from "../aggregate/item-name.js";
import { ListingCheck, MAX_LISTING_CHARS } from "./refused-item.js";

/** A tool as an upstream listed it, every field kept. */
export type UpstreamTool = Result & { readonly name: string };

/** Where one upstream stands. */
export type UpstreamStatus = "connecting" | "connected" | "failed" | "closed";

/**
 * The requests an upstream may send the agent's client: those of the capabilities the proxy declares to it
 * (see `connectUpstream`). Others are answered "method not found" by the proxy itself.
 */
const FORWARDED_REQUESTS: ReadonlySet<string> = new Set(["sampling/createMessage", "elicitation/create"]);

/**
 * Starting again an upstream that stopped after it had been up (a crash, a closed connection): first after
 * `firstDelayMs`, then twice as long after each attempt that fails or stops soon, up to `maxDelayMs`; a
 * connection that stayed up `maxDelayMs` starts the count again. One that never came up is not retried (a
 * misspelt command would only fail again).
 */
export interface UpstreamRestart {
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
}

/** One upstream server, as the pool tracks it. */
export interface Upstream {
  readonly spec: UpstreamSpec;
  readonly status: UpstreamStatus;
  /** Why it failed or closed. */
  readonly error?: string;
  readonly client?: Client;
  /** The relay beside the client that carries the accepted `tools/call`s. */
  readonly relay?: UpstreamRelay;
  readonly capabilities?: ServerCapabilities;
  readonly tools: readonly UpstreamTool[];
}

/** What the pool tells its owner. */
export interface UpstreamPoolEvents {
  /** A request from an upstream to the agent's client: sampling or elicitation (others are refused). */
  readonly onRequest: (server: string, request: JSONRPCRequest, signal: AbortSignal) => Promise<Result>;
  /** Any notification from an upstream except progress and cancellation (the SDK routes those). */
  readonly onNotification: (server: string, notification: Notification) => void;
  /** An upstream's tool listing changed (after it has been fetched again). */
  readonly onToolsChanged: (server: string) => void;
  /**
   * An upstream came up after `start` had returned (its bounded wait was over): connected, its tools listed.
   * The owner announces its tools as it does a list change.
   */
  readonly onLateStart?: (server: string, restarted: boolean) => void;
  /** An upstream that stopped (or failed to restart) is started again in `delayMs` (see {@link UpstreamRestart}). */
  readonly onRestartScheduled?: (server: string, delayMs: number) => void;
  /** An upstream failed to start or stopped: reported on stderr and to the audit sink. */
  readonly onFailure: (server: string, phase: "connect" | "closed", message: string) => void;
  readonly onStderrLine?: (server: string, line: string) => void;
  /** A connected upstream's transport reported an error (a line that is not JSON-RPC, a message too large). */
  readonly onTransportError?: (server: string, message: string) => void;
  /** Vault credentials for an upstream's transport (headers or child environment), resolved at connect. */
  readonly credentialsFor?: (spec: UpstreamSpec) => Promise<UpstreamCredentials | undefined>;
  /**
   * Tools of a listing that are not served (`why`: a definition the MCP schema refuses, which would make the
   * agent's client refuse the whole `tools/list`; a second tool of the same name). Said once per listing
   * that differs from the last one said.
   */
  readonly onToolsDropped?: (server: string, why: string) => void;
  /** Vault entries put into an upstream's transport, by name only (for the audit). */
  readonly onCredentialsInjected?: (server: string, names: readonly string[]) => void;
  /**
   * Every other secret value that may reach an upstream (vault entries injected into calls' arguments), read
   * on every message: scrubbed, with the upstream's transport credentials, from all it sends and says.
   */
  readonly secretValues?: () => readonly string[];
}

interface MutableUpstream {
  spec: UpstreamSpec;
  /** Values injected into its transport: scrubbed from every message about it. */
  secrets?: readonly string[];
  status: UpstreamStatus;
  error?: string;
  /** The transport gave up on a message too large for it: the connection closes because of it. */
  oversized?: string;
  client?: Client;
  relay?: UpstreamRelay;
  capabilities?: ServerCapabilities;
  tools: UpstreamTool[];
  /** What was last said of the tools of its listing that are not served. */
  dropped?: string;
  /** Its tools are being listed again after a list change; `relist`: another change came meanwhile. */
  relisting?: { relist: boolean };
  /** It was up once and stopped: it is being started again (a failed attempt schedules the next). */
  restarting?: boolean;
  /** Attempts to start it again since it was last up for long (the backoff's exponent). */
  restarts?: number;
  /** When it last came up (ms since the epoch). */
  connectedAt?: number;
  restartTimer?: ReturnType<typeof setTimeout>;
  /** The client being connected (closed if the pool closes before it is up: a spawned server is stopped). */
  connecting?: Client;
  /** Says its transport's errors, within a budget (a server writing garbage for ever cannot flood the log). */
  sayError?: (message: string) => void;
}

/** The upstream servers of one proxy: connected in parallel, each failing on its own. */
export class UpstreamPool {
  readonly #upstreams = new Map<string, MutableUpstream>();
  readonly #events: UpstreamPoolEvents;
  readonly #timeoutMs: number;
  readonly #startTimeoutMs: number;
  readonly #restart: UpstreamRestart | undefined;
  #closing = false;
  /** `start` has returned: an upstream coming up from now on is announced (`onLateStart`). */
  #serving = false;

  /**
   * @param timeoutMs - bound on one call (progress resets it)
   * @param startTimeoutMs - bound on connecting and on listing tools (a server's start can be slow: `npx -y`)
   * @param restart - start again an upstream that stopped; absent: one that stops stays stopped
   */
  constructor(
    specs: readonly UpstreamSpec[],
    events: UpstreamPoolEvents,
    timeoutMs: number,
    startTimeoutMs = 60_000,
    restart?: UpstreamRestart,
  ) {
    for (const spec of specs) this.#upstreams.set(spec.name, { spec, status: "connecting", tools: [] });
    this.#events = events;
    this.#timeoutMs = timeoutMs;
    this.#startTimeoutMs = Math.max(startTimeoutMs, timeoutMs);
    this.#restart = restart;
  }

  /**
   * Connects every upstream and fetches its tools. Resolves when each has connected or failed, or, with
   * `waitMs`, once that long has passed and at least one is connected: one server that is slow or hangs at
   * its start does not hold back the others (nor an agent's client, whose own `initialize` would time out
   * meanwhile). Those still starting go on, each within its start timeout; one that comes up is told by
   * `onLateStart`, one that fails by `onFailure`. With none connected yet it waits on, for the first or
   * for all to fail: there is nothing to serve before.
   */
  async start(waitMs = Number.POSITIVE_INFINITY): Promise<void> {
    const starts = [...this.#upstreams.values()].map((u) => this.#start(u).then(() => u.status === "connected"));
    const all = Promise.all(starts).then(() => undefined);
    if (Number.isFinite(waitMs)) {
      const firstUp = new Promise<void>((resolve) => {
        for (const start of starts) void start.then((up) => up && resolve());
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, waitMs))));
      try {
        await Promise.race([all, waited.then(() => firstUp)]);
      } finally {
        clearTimeout(timer);
      }
    } else await all;
    this.#serving = true;
  }

  /**
   * Sends `signal` to every spawned (stdio) upstream at once, started or still starting: for a proxy told to
   * stop while it closes, which must not leave its servers running after it (they would outlive it: a child
   * is not ended with its parent). Their connections then close as each process ends.
   */
  signalAll(signal: NodeJS.Signals = "SIGTERM"): void {
    for (const upstream of this.#upstreams.values()) {
      for (const client of [upstream.client, upstream.connecting])
        if (client !== undefined) signalChild(client, signal);
    }
  }

  /** Every upstream, in configuration order. */
  list(): readonly Upstream[] {
    return [...this.#upstreams.values()];
  }

  /** One upstream by name. */
  get(name: string): Upstream | undefined {
    return this.#upstreams.get(name);
  }

  /** The connected upstreams. */
  connected(): readonly (Upstream & { readonly client: Client })[] {
    return this.list().filter((u): u is Upstream & { client: Client } => u.status === "connected" && !!u.client);
  }

  /** Sends a request to one upstream and returns its result unchanged (no schema beyond the base result). */
  async request(server: string, method: string, params: unknown, options: RequestOptions = {}): Promise<Result> {
    const upstream = this.#upstreams.get(server);
    if (upstream?.status !== "connected" || upstream.client === undefined) {
      throw new Error(`upstream \`${server}\` is not connected${upstream?.error ? `: ${upstream.error}` : ""}`);
    }
    const request = { method, ...(params !== undefined ? { params: params as Record<string, unknown> } : {}) };
    return upstream.client.request(request, ResultSchema, { timeout: this.#timeoutMs, ...options });
  }

  /**
   * Relays a request to one upstream beside its SDK client (see {@link UpstreamRelay}): the accepted
   * `tools/call`s. Same errors as `request`.
   */
  async relay(server: string, method: string, params: Record<string, unknown>, call: RelayedRequest): Promise<Result> {
    const upstream = this.#upstreams.get(server);
    if (upstream?.status !== "connected" || upstream.relay === undefined) {
      throw new Error(`upstream \`${server}\` is not connected${upstream?.error ? `: ${upstream.error}` : ""}`);
    }
    return withoutDecisionMeta(await upstream.relay.request(method, params, call));
  }

  /** Closes every upstream (stdio servers are stopped). */
  async close(): Promise<void> {
    this.#closing = true;
    for (const upstream of this.#upstreams.values()) clearTimeout(upstream.restartTimer);
    const starting = [...this.#upstreams.values()].flatMap((u) =>
      u.status === "connecting" && u.connecting !== undefined ? [u.connecting] : [],
    );
    // a server still starting has answered nothing: it is not asked to end by its stdin (the SDK waits 2 s
    // for that before a SIGTERM), it is stopped at once, so a proxy that is itself told to stop soon after
    // (an MCP client ends its server 2 s after closing its stdin) leaves no such child behind
    for (const client of starting) signalChild(client, "SIGTERM");
    await Promise.all(
      [...this.connected().map((u) => u.client), ...starting].map((c) => c.close().catch(() => undefined)),
    );
  }

  async #start(upstream: MutableUpstream): Promise<void> {
    const name = upstream.spec.name;
    let credentials: UpstreamCredentials | undefined;
    try {
      credentials = await this.#events.credentialsFor?.(upstream.spec);
      upstream.secrets = [...Object.values(credentials?.headers ?? {}), ...Object.values(credentials?.env ?? {})];
      const { client, relay } = await connectUpstream(
        upstream.spec,
        {
          prepare: (c) => this.#prepare(name, c),
          ...(this.#events.onStderrLine ? { onStderrLine: (line) => this.#events.onStderrLine?.(name, line) } : {}),
          ...(credentials !== undefined ? { credentials } : {}),
          ...(this.#events.secretValues !== undefined ? { secretValues: this.#events.secretValues } : {}),
        },
        this.#startTimeoutMs,
      );
      delete upstream.connecting;
      if (this.#closing) {
        // the pool closed while it was starting: its server is stopped, not left running
        upstream.status = "closed";
        await client.close().catch(() => undefined);
        return;
      }
      if (credentials !== undefined && credentials.injected.length > 0) {
        this.#events.onCredentialsInjected?.(name, credentials.injected);
      }
      upstream.client = client;
      upstream.relay = relay;
      upstream.capabilities = client.getServerCapabilities() ?? {};
      upstream.status = "connected";
      upstream.connectedAt = Date.now();
      client.onerror = (err) => this.#transportError(upstream, err);
      client.onclose = () => this.#closed(upstream);
      if (upstream.capabilities.tools) upstream.tools = await this.#listTools(name);
      const restarted = upstream.restarting === true;
      delete upstream.restarting;
      if (this.#serving && upstream.status === "connected") this.#events.onLateStart?.(name, restarted);
    } catch (err) {
      delete upstream.connecting;
      if (this.#closing) {
        if (upstream.status === "connecting") upstream.status = "closed";
        return;
      }
      if (upstream.status === "connected") {
        // listing failed after connecting: keep it connected with no tools, report
        this.#events.onFailure(
          name,
          "connect",
          `tools/list failed: ${scrubCredentials(messageOf(err), this.#secretsOf(upstream))}`,
        );
        const restarted = upstream.restarting === true;
        delete upstream.restarting;
        if (this.#serving) this.#events.onLateStart?.(name, restarted);
        return;
      }
      upstream.status = "failed";
      upstream.error = scrubCredentials(
        `${whereIs(upstream.spec)}${messageOf(err)}${notFoundHint(upstream.spec, err)}`,
        [...this.#secretsOf(upstream), ...urlSecrets(upstream.spec)],
      );
      this.#events.onFailure(name, "connect", upstream.error);
      if (upstream.restarting === true) this.#scheduleRestart(upstream, false);
    }
  }

  /**
   * Starts a stopped upstream again after its backoff (nothing without `restart`, or once closing): `stopped`,
   * it stopped after being up (else an attempt to start it again failed).
   */
  #scheduleRestart(upstream: MutableUpstream, stopped: boolean): void {
    const restart = this.#restart;
    if (restart === undefined || this.#closing) return;
    // a connection that lasted starts the backoff again; one that stops soon, or an attempt that fails, doubles it
    const lasted =
      stopped && upstream.connectedAt !== undefined && Date.now() - upstream.connectedAt >= restart.maxDelayMs;
    const attempt = lasted ? 0 : (upstream.restarts ?? 0);
    upstream.restarts = attempt + 1;
    const delayMs = Math.min(restart.maxDelayMs, restart.firstDelayMs * 2 ** Math.min(attempt, 30));
    this.#events.onRestartScheduled?.(upstream.spec.name, delayMs);
    upstream.restartTimer = setTimeout(() => {
      delete upstream.restartTimer;
      if (this.#closing) return;
      upstream.status = "connecting";
      upstream.restarting = true;
      upstream.tools = [];
      for (const key of ["error", "oversized", "client", "relay", "capabilities"] as const) delete upstream[key];
      void this.#start(upstream);
    }, delayMs);
    // a pending restart keeps no process alive that would otherwise end
    upstream.restartTimer.unref?.();
  }

  #prepare(name: string, client: Client): void {
    const upstream = this.#upstreams.get(name);
    if (upstream !== undefined) upstream.connecting = client;
    client.fallbackRequestHandler = (request, extra) => {
      // only what the proxy declared to the upstream reaches an agent's client: never roots/list (the agent's
      // directories are not the server's to read), nor a method an agent's client may answer unasked
      if (!FORWARDED_REQUESTS.has(request.method)) {
        const refused = new McpError(ErrorCode.MethodNotFound, "");
        refused.message = `Method not found: ${request.method}`; // as the SDK words it, without its prefix
        return Promise.reject(refused);
      }
      return this.#events.onRequest(name, request, extra.signal);
    };
    client.fallbackNotificationHandler = async (notification) => {
      if (notification.method === "notifications/tools/list_changed") {
        await this.#refreshTools(name);
        return;
      }
      this.#events.onNotification(name, notification);
    };
  }

  /**
   * Lists an upstream's tools again after it said they changed. One listing at a time: changes announced
   * while one runs are taken by one more listing after it, so a flood of `list_changed` costs two listings
   * (and two notices to the clients), not one each.
   */
  async #refreshTools(name: string): Promise<void> {
    const upstream = this.#upstreams.get(name);
    if (upstream?.status !== "connected") return;
    if (upstream.relisting !== undefined) {
      upstream.relisting.relist = true;
      return;
    }
    const relisting = { relist: true };
    upstream.relisting = relisting;
    try {
      while (relisting.relist && upstream.status === "connected") {
        relisting.relist = false;
        try {
          upstream.tools = await this.#listTools(name);
        } catch (err) {
          const message = scrubCredentials(messageOf(err), this.#secretsOf(upstream));
          this.#events.onFailure(name, "connect", `tools/list failed: ${message}`);
          continue;
        }
        this.#events.onToolsChanged(name);
      }
    } finally {
      delete upstream.relisting;
    }
  }

  /**
   * Every page of an upstream's tools. A tool the MCP schema refuses (annotations that are no object, an
   * input schema that is not `{"type": "object", …}`, no name) or one nested too deep to write as JSON is
   * left out, and so is a second tool of a name already listed: the agent's client checks `tools/list` as a
   * whole, so one such tool would cost the agent every tool of every server; one that cannot be written
   * cannot be pinned either (and stopped the pin check of every tool of its server); and a name must lead
   * to one definition (the one pinned and served). So is a tool whose name is not of the MCP name format
   * (`whyItemNameRefused`: 1–128 of `A-Z a-z 0-9 _ - .`), which would read ambiguously to a person and a
   * policy (a space, a line break, a look-alike letter, `on server x` text). What is listed past 4 MiB of JSON (`MAX_LISTING_CHARS`) is left
   * out too, and no further page asked for: one server's listing stays small enough to hold and to send.
   */
  async #listTools(name: string): Promise<UpstreamTool[]> {
    const tools: UpstreamTool[] = [];
    const names = new Set<string>();
    const check = new ListingCheck(ToolSchema, "name", "tool", MAX_LISTING_CHARS, whyItemNameRefused);
    let cursor: string | undefined;
    for (let page = 0; page < 100 && !check.full; page++) {
      const params = cursor !== undefined ? { cursor } : undefined;
      const result = await this.request(name, "tools/list", params, { timeout: this.#startTimeoutMs });
      const items = Array.isArray(result["tools"]) ? (result["tools"] as unknown[]) : [];
      for (const item of items) {
        if (!check.admit(item)) continue;
        const tool = item as UpstreamTool;
        if (names.has(tool.name)) check.refuse(tool, "listed twice: the first is served");
        else {
          tools.push(tool);
          names.add(tool.name);
        }
      }
      cursor = typeof result["nextCursor"] === "string" ? result["nextCursor"] : undefined;
      if (cursor === undefined) break;
    }
    this.#reportDropped(name, check.describe());
    return tools;
  }

  #reportDropped(name: string, said: string): void {
    const upstream = this.#upstreams.get(name);
    if (upstream === undefined || upstream.dropped === said) return;
    upstream.dropped = said;
    if (said !== "") this.#events.onToolsDropped?.(name, said);
  }

  /** Every value to scrub from what is said about an upstream: its transport's credentials and the others. */
  #secretsOf(upstream: MutableUpstream): readonly string[] {
    return [...(upstream.secrets ?? []), ...(this.#events.secretValues?.() ?? [])];
  }

  #transportError(upstream: MutableUpstream, err: unknown): void {
    const message = scrubCredentials(messageOf(err), this.#secretsOf(upstream));
    const limit = oversizedLimit(message);
    if (limit !== undefined) {
      // the SDK transport closes the connection right after this: say why when it does
      upstream.oversized = `it sent a message over the ${limit}-byte limit of a stdio message, so the connection was closed`;
      return;
    }
    if (upstream.status !== "connected") return;
    upstream.sayError ??= budgetLines(
      (line) => this.#events.onTransportError?.(upstream.spec.name, line),
      (count) =>
        `(${count} more like this not shown: over ${DEFAULT_LINE_BURST} at once or ${DEFAULT_LINES_PER_SECOND} a second)`,
    );
    upstream.sayError(message);
  }

  #closed(upstream: MutableUpstream): void {
    if (upstream.status !== "connected") return;
    upstream.status = "closed";
    upstream.error = upstream.oversized ?? "the server closed the connection";
    if (this.#closing) return;
    this.#events.onFailure(upstream.spec.name, "closed", upstream.error);
    this.#scheduleRestart(upstream, true);
  }
}

/**
 * The result without a `_meta["acp/decision"]` of the upstream's: that key is the proxy's own, which it puts
 * on the calls it refused, for programs to read. An upstream's would pass a call it ran for one refused (or
 * a refusal for one the proxy decided otherwise). The rest of `_meta` is kept.
 */
function withoutDecisionMeta(result: Result): Result {
  const meta = result._meta;
  if (meta === undefined || !Object.hasOwn(meta, DECISION_META_KEY)) return result;
  const { [DECISION_META_KEY]: _forged, ...rest } = meta;
  void _forged;
  const { _meta: _old, ...body } = result;
  void _old;
  return Object.keys(rest).length > 0 ? { ...body, _meta: rest } : body;
}

/** The limit named by the SDK stdio transports' "ReadBuffer exceeded maximum size of N bytes", if it is that. */
export function oversizedLimit(message: string): number | undefined {
  const match = /ReadBuffer exceeded maximum size of (\d+) bytes/.exec(message);
  return match === null ? undefined : Number(match[1]);
}

/** `text` percent-decoded, or as it is when it is no valid percent-encoding (`p%zz`). */
function decodedOrAsIs(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The user and password written into a URL upstream's address (fetch quotes the whole URL when it refuses
 * one), as written and decoded: the user too, where a token often stands (`https://ghp_…@host/mcp`); and the
 * values of its query of 6 characters or more, where a key often stands (`/sse?api_key=…`).
 */
function urlSecrets(spec: UpstreamSpec): string[] {
  if (spec.transport === "stdio") return [];
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    return [];
  }
  const query = [...url.searchParams.values()].filter((v) => v.length >= 6);
  const written = url.search
    .slice(1)
    .split("&")
    .map((pair) => pair.slice(pair.indexOf("=") + 1))
    .filter((v) => v.length >= 6);
  return [url.password, url.username]
    .flatMap((p) => [p, decodedOrAsIs(p)])
    .concat(query, written)
    .filter((p) => p !== "");
}

/**
 * A URL upstream's address for a message (`http://127.0.0.1:8931/mcp: `), without any user or password, nor
 * the values of its query (`?api_key=…`) or its fragment; "" for a command.
 */
function whereIs(spec: UpstreamSpec): string {
  if (spec.transport === "stdio") return "";
  try {
    const url = new URL(spec.url);
    url.username = "";
    url.password = "";
    const names = [...url.searchParams.keys()];
    url.search = "";
    url.hash = "";
    const query = names.length === 0 ? "" : `?${names.map((n) => `${encodeURIComponent(n)}=…`).join("&")}`;
    return `${url.toString()}${query}: `;
  } catch {
    return "";
  }
}

/**
 * What a stdio upstream's `spawn … ENOENT` means to the person reading it: the command is not on the
 * `PATH` the proxy was given (an MCP client often gives one shorter than the shell's), or misspelt (or its
 * `cwd` does not exist, which spawn reports the same way).
 */
function notFoundHint(spec: UpstreamSpec, err: unknown): string {
  if (spec.transport !== "stdio" || typeof err !== "object" || err === null) return "";
  const { code, syscall } = err as { code?: unknown; syscall?: unknown };
  if (code !== "ENOENT" || typeof syscall !== "string" || !syscall.startsWith("spawn")) return "";
  const where = spec.cwd === undefined ? "" : `, or no directory \`${spec.cwd}\` (its cwd)`;
  return ` (no command \`${spec.command}\` on the PATH acp was started with${where}: check its name, or give its full path)`;
}

/** The message of an error-like value, one line, with its causes (`fetch failed: connect ECONNREFUSED …`). */
export function messageOf(err: unknown): string {
  let text = err instanceof Error ? err.message : String(err);
  // `fetch failed` says nothing: its cause (`connect ECONNREFUSED 127.0.0.1:8931`) does; a few levels at most
  let cause: unknown = err instanceof Error ? err.cause : undefined;
  for (let depth = 0; depth < 3 && cause instanceof Error; depth++, cause = cause.cause) {
    if (cause.message !== "" && !text.includes(cause.message)) text += `: ${cause.message}`;
  }
  return text.replace(/\s+/g, " ").trim();
}

/** Sends `signal` to the process of a stdio upstream's client (none for a URL upstream, or once it ended). */
function signalChild(client: Client, signal: NodeJS.Signals): void {
  const pid = (client.transport as { readonly pid?: number | null } | undefined)?.pid;
  if (typeof pid !== "number") return;
  try {
    process.kill(pid, signal);
  } catch {
    // it has ended already
  }
}
