import type { ClassificationOverride } from "@acp/core";
import { newId } from "../gate/new-id.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  McpError,
  ResultSchema,
  type JSONRPCRequest,
  type RequestId,
  type Notification,
  type Result,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { PROXY_DEFAULTS, type PrefixMode } from "../config/proxy-config.js";
import { createApprovalMemory } from "../gate/approval-memory.js";
import type { GateDeps } from "../gate/gate-tool-call.js";
import type {
  AuditSink,
  CallObserver,
  ConsentBroker,
  CredentialHook,
  Decide,
  ExecutionAdmission,
  PlanHook,
} from "../gate/types.js";
import { createMemoryPinStore, type PinStore } from "../pinning/pin-store.js";
import { createToolPinning, type ToolPinning } from "../pinning/tool-pinning.js";
import { createReportedChanges } from "../pinning/reported-changes.js";
import { printable } from "../consent/channels/terminal/format.js";
import {
  UpstreamPool,
  messageOf,
  oversizedLimit,
  type Upstream,
  type UpstreamRestart,
} from "../upstream/upstream-pool.js";
import type { UpstreamSpec } from "../upstream/upstream-spec.js";
import { registerSessionHandlers } from "./session-handlers.js";
import { ProxyCatalog } from "../aggregate/catalog.js";
import { routeUpstreamMessage, type InflightCall } from "./session-routing.js";
import { ResourceSubscriptions } from "./subscriptions.js";
import { DownstreamTransport, interceptDownstream, UnsentAnswerError } from "./fast-path.js";
import { SUBMIT_PLAN_NAME } from "./submit-plan.js";
import { PendingObservations } from "./observations.js";
import type { CallAbort } from "./call-abort.js";
import { agentError, relayedError } from "./agent-error.js";
import { observeLog, observeUpstreamRequest } from "./upstream-text.js";
import { withoutSmuggledObservations, withoutSmuggledText } from "./smuggled-text.js";
import { readOnlySetAsideMessage } from "./server-annotations.js";
import { budgetLines } from "../upstream/line-budget.js";

/** Everything `createProxy` takes; the three seams are `decide`, `broker` and `audit`. */
export interface AcpProxyOptions {
  readonly upstreams: readonly UpstreamSpec[];
  /** The decision pipeline (the integrator's), or a test's. */
  readonly decide: Decide;
  /**
   * Judges arguments a person edited (approved with modifications) before they are forwarded: the standing
   * rules without the session and without spending rate limits; a refusal refuses the call. Default:
   * `decide`.
   */
  readonly recheckEdits?: Decide;
  /**
   * The policy's `classify:` entries in force: the start's line about tools whose `readOnlyHint` is set aside
   * leaves out those classified as reads anyway. Default: none (the built-in table and annotations alone).
   */
  readonly classify?: () => readonly ClassificationOverride[];
  /** Where ask/defer decisions go to a person. */
  readonly broker: ConsentBroker;
  /** Receives every step; default: discards. */
  readonly audit?: AuditSink;
  /** Sees executed calls and their results per session (the session runtime's provenance); optional. */
  readonly observer?: CallObserver;
  /** Injects vault credentials into accepted calls; results and logs are redacted of their values. */
  readonly credentials?: CredentialHook;
  /** Offers the agent `acp_submit_plan` (validated against the intent, approved by a person). */
  readonly plans?: PlanHook;
  /** Tool pins; default: in memory (forgotten on exit). */
  readonly pinStore?: PinStore;
  /** Accept every changed tool definition at start (`--accept-tool-changes`). */
  readonly acceptToolChanges?: boolean;
  readonly prefixTools?: PrefixMode;
  /** Upper bound on one upstream call in ms (progress resets it); default 60 000. */
  readonly callTimeoutMs?: number;
  /**
   * How long `start` waits for every upstream before serving the ones up, ms (at least one must be up);
   * default: until each has connected or failed. `acp proxy` passes `proxy.start_wait_seconds` (10 s).
   */
  readonly startWaitMs?: number;
  /**
   * Start again an upstream that stopped after it had been up (crashed, closed its connection), with a
   * doubling delay; its tools come back with tools/list_changed. Default: none (`acp proxy` passes 1 s to
   * 60 s unless `proxy.restart_upstreams: false`).
   */
  readonly restartUpstreams?: UpstreamRestart;
  /** Upper bound on one upstream call in ms however much progress it sends; default 3 600 000 (1 h). */
  readonly callMaxMs?: number;
  /** Consent wait when the decision names no timeout, ms; default 120 000. */
  readonly consentTimeoutMs?: number;
  /**
   * Most `tools/call`s of one session in flight at once (being decided, waiting for a person, or forwarded);
   * one more is refused at once, never forwarded (`too_many_calls_in_flight`). Default 64.
   */
  readonly maxCallsInFlight?: number;
  /** How often a waiting call sends a progress tick, ms; default 5 000. */
  readonly progressIntervalMs?: number;
  /** The agent's name on action requests; default: the client's name from `initialize`. */
  readonly agent?: string;
  readonly now?: () => Date;
  /** One line for stderr (never stdout: stdout carries MCP in stdio mode). */
  readonly log?: (line: string) => void;
}

/** One connected downstream client. */
export interface ProxySession {
  readonly id: string;
  /** The agent the session's token names (`proxy.agent_tokens`), if it does: it wins over the client's own name. */
  readonly agent?: string;
  readonly server: Server;
  /** The session's `tools/call`s in flight, oldest first (where an upstream's sampling or logging goes). */
  readonly calls: Set<InflightCall>;
  /** The session's `tools/call`s taken by the fast path and in flight, by the client's request id. */
  readonly fast: Map<RequestId, CallAbort>;
  /** How many of the session's `tools/call`s are being decided or forwarded (bounded by `maxCallsInFlight`). */
  inFlight: number;
  lastActive: number;
  /** The transport the session's SDK server is connected to (set by `connect`). */
  downstream?: DownstreamTransport;
}

/**
 * The agent named on a session's action requests: the one its token names, else the proxy's `agent`
 * option, else the name the client gave in `initialize` (which the client chooses).
 */
export function sessionAgent(proxy: AcpProxy, session: ProxySession): string | undefined {
  return session.agent ?? proxy.options.agent ?? session.server.getClientVersion()?.name;
}

/** Information the proxy gives back about itself. */
export const PROXY_SERVER_INFO = { name: "acp-proxy", version: "0.1.0" } as const;

/** How long `close()` waits for calls still in the gate (withdrawn by the close) to audit their end. */
const CLOSE_GATING_MS = 5_000;
/** Lines about hidden characters from one server: 20 at once, then one a second. */
const HIDDEN_TEXT_LINES = { burst: 20, perSecond: 1 } as const;

/** The MCP proxy: upstream servers on one side, any number of downstream sessions on the other. */
export class AcpProxy {
  readonly options: AcpProxyOptions;
  readonly pool: UpstreamPool;
  readonly catalog: ProxyCatalog;
  readonly pinning: ToolPinning;
  readonly gate: GateDeps;
  readonly sessions = new Map<string, ProxySession>();
  /** Resource subscriptions of every session, counted per upstream resource. */
  readonly subscriptions = new ResourceSubscriptions();
  /** What the session runtime is told after each call, run once the reply is out (or before the next decision). */
  readonly observations: PendingObservations;
  readonly #log: (line: string) => void;
  readonly #hiddenTextLines = new Map<string, (line: string) => void>();
  readonly #audit: AuditSink;
  /** Calls in the gate (deciding, waiting for a person, auditing the outcome). */
  readonly #gating = new Set<Promise<unknown>>();
  readonly #reportedUnserved = new Set<string>();
  /** Tool changes logged and audited: one change once, not at every listing of its server. */
  readonly #reportedChanges = createReportedChanges();
  #started = false;

  constructor(options: AcpProxyOptions) {
    // the runtime never reads hidden text, whichever path tells it a result (see withoutSmuggledObservations)
    const observer = options.observer;
    this.options = observer === undefined ? options : { ...options, observer: withoutSmuggledObservations(observer) };
    // every line escaped: tool names, methods, error messages and parse errors quote what an upstream sent,
    // and raw, an escape sequence could redraw the terminal a person approves on
    const log = options.log;
    this.#log = log === undefined ? () => undefined : (line) => log(printable(line));
    this.#audit = options.audit ?? { record: () => undefined };
    const now = options.now ?? (() => new Date());
    this.observations = new PendingObservations((err) =>
      this.#log(`the session runtime could not record a result: ${messageOf(err)}`),
    );
    const decide = options.decide;
    this.pinning = createToolPinning({
      store: options.pinStore ?? createMemoryPinStore(),
      now,
      ...(options.acceptToolChanges === true ? { acceptChanges: true } : {}),
      // the agent was served the pinned description while the tool was held: it lists again
      onAccept: () => {
        this.catalog.invalidate();
        this.#broadcast({ method: "notifications/tools/list_changed" });
      },
      onWithheld: (server, tool, why) =>
        this.#log(
          `upstream \`${server}\`: tool \`${tool}\` is not served while its change is held: its pinned definition hides text (${why})`,
        ),
    });
    this.gate = {
      // no decision of a session misses a result it returned: its queued observations run first
      decide: (request, context) => {
        if (context !== undefined) this.observations.settle(context.sessionId);
        return context === undefined ? decide(request) : decide(request, context);
      },
      broker: options.broker,
      ...(options.recheckEdits !== undefined ? { recheckEdits: options.recheckEdits } : {}),
      audit: this.#audit,
      approvals: createApprovalMemory(),
      pinning: this.pinning,
      now,
      consentTimeoutMs: options.consentTimeoutMs ?? PROXY_DEFAULTS.consentTimeoutMs,
      track: (running) => {
        this.#gating.add(running);
        const forget = (): void => void this.#gating.delete(running);
        running.then(forget, forget);
        return running;
      },
      // a call let through is counted before it is forwarded (after the results it may follow): calls of a
      // session in flight together are judged with each other counted, against its budgets and kill switch
      ...(this.options.observer !== undefined ? { admit: this.#admit(this.options.observer) } : {}),
    };
    this.pool = new UpstreamPool(
      options.upstreams,
      {
        onRequest: (server, request, signal) => this.#forwardUpstreamRequest(server, request, signal),
        onNotification: (server, notification) => this.#forwardUpstreamNotification(server, notification),
        onToolsChanged: (server) => void this.#toolsChanged(server),
        onLateStart: (server, restarted) => void this.#lateStart(server, restarted),
        onRestartScheduled: (server, delayMs) =>
          this.#log(`upstream \`${server}\`: starting it again in ${formatDelay(delayMs)}`),
        onFailure: (server, phase, message) => this.#reportFailure(server, phase, message),
        // the upstream's own text: escaped, so it cannot erase or imitate the proxy's lines on a terminal
        onStderrLine: (server, line) => this.#log(`[${server}] ${printable(line)}`),
        onTransportError: (server, message) =>
          this.#log(`upstream \`${server}\` sent something that is not a JSON-RPC message: ${message}`),
        onToolsDropped: (server, why) => this.#log(`upstream \`${server}\`: ${printable(why)}`),
        credentialsFor: (spec) => options.credentials?.upstream?.(spec) ?? Promise.resolve(undefined),
        // the values put into calls' arguments too: an upstream's every message is scrubbed of them
        ...(options.credentials !== undefined ? { secretValues: () => options.credentials?.secretValues() ?? [] } : {}),
        onCredentialsInjected: (server, names) => {
          for (const credential of names) {
            Promise.resolve(
              this.#audit.record("credential_injected", { server, credential, target: "transport" }),
            ).catch((err: unknown) => this.#log(`audit failed: ${messageOf(err)}`));
          }
        },
      },
      options.callTimeoutMs ?? PROXY_DEFAULTS.callTimeoutMs,
      undefined,
      options.restartUpstreams,
    );
    // with plans, `acp_submit_plan` is the proxy's own tool: no upstream tool is served under that name
    this.catalog = new ProxyCatalog(
      this.pool,
      options.prefixTools ?? PROXY_DEFAULTS.prefixTools,
      (line) => this.#log(line),
      options.plans !== undefined ? [SUBMIT_PLAN_NAME] : [],
    );
  }

  /**
   * Connects every upstream, records or checks tool pins. A failing upstream is reported; the rest serve.
   * With `startWaitMs`, resolves once that long has passed with at least one upstream up, even if others
   * are still starting: each of those that comes up later is announced to every session as a tool list
   * change (see `UpstreamPool.start`).
   */
  async start(): Promise<void> {
    await this.pool.start(this.options.startWaitMs);
    for (const upstream of this.pool.connected()) await this.#observePins(upstream.spec.name);
    // a list change during the start may have cached a union without the upstreams that came up later
    this.#started = true;
    this.catalog.invalidate();
    if (this.#started) this.#reportUnserved();
    for (const upstream of this.pool.list()) {
      this.#log(
        upstream.status === "connecting"
          ? `upstream \`${upstream.spec.name}\`: still starting; serving the others meanwhile (its tools are announced with tools/list_changed once it is up)`
          : `upstream \`${upstream.spec.name}\`: ${upstream.status}${upstream.status === "connected" ? ` (${upstream.tools.length} tools)` : ""}`,
      );
      if (upstream.status === "connected" && upstream.spec.trusted !== true) this.#sayReadOnlySetAside(upstream);
    }
  }

  /** Tells once which tools' `readOnlyHint` does not count, since their server is not marked trusted. */
  #sayReadOnlySetAside(upstream: Upstream): void {
    const message = readOnlySetAsideMessage(upstream.spec.name, upstream.tools, this.options.classify?.());
    if (message !== null) this.#log(message);
  }

  /** Serves one downstream client on `transport` (stdio, in-memory, or one HTTP session). */
  async connect(
    transport: Transport,
    sessionId: string = newId("session"),
    options: { readonly agent?: string } = {},
  ): Promise<ProxySession> {
    const session = this.createSession(sessionId, options.agent);
    // accepted tools/calls take the fast path beside the SDK server; everything else goes through it
    const downstream: DownstreamTransport = new DownstreamTransport(
      transport,
      (message) => interceptDownstream(this, session, downstream, message),
      () => {
        for (const controller of session.fast.values()) controller.abort();
        session.fast.clear();
      },
    );
    session.downstream = downstream;
    await session.server.connect(downstream);
    return session;
  }

  /** Creates (without connecting) the downstream server of one session. */
  createSession(sessionId: string, agent?: string): ProxySession {
    const server = new Server(PROXY_SERVER_INFO, { capabilities: this.capabilities() });
    const session: ProxySession = {
      id: sessionId,
      ...(agent !== undefined ? { agent } : {}),
      server,
      calls: new Set(),
      fast: new Map(),
      inFlight: 0,
      lastActive: Date.now(),
    };
    registerSessionHandlers(this, session);
    // what the transport could not take from the client is said on the log, not dropped in silence
    server.onerror = (err) => {
      const message = messageOf(err);
      const limit = oversizedLimit(message);
      this.#log(
        err instanceof UnsentAnswerError
          ? message
          : limit !== undefined
            ? `the client sent a message over the ${limit}-byte limit of a stdio message: closing its session (${sessionId})`
            : `the client sent something its transport refused: ${message}`,
      );
    };
    server.onclose = () => {
      this.observations.settle(sessionId);
      this.sessions.delete(sessionId);
      this.#dropSubscriptions(sessionId);
      this.options.observer?.closed?.(sessionId);
      this.gate.approvals.forgetSession(sessionId);
    };
    this.sessions.set(sessionId, session);
    return session;
  }

  /** The capabilities the agent sees: tools always; resources, prompts, logging, completions when an upstream has them. */
  capabilities(): ServerCapabilities {
    const ups = this.pool.connected().map((u) => u.capabilities ?? {});
    const has = (key: keyof ServerCapabilities): boolean => ups.some((c) => c[key] !== undefined);
    return {
      tools: { listChanged: true },
      ...(has("resources")
        ? { resources: { listChanged: true, ...(ups.some((c) => c.resources?.subscribe) ? { subscribe: true } : {}) } }
        : {}),
      ...(has("prompts") ? { prompts: { listChanged: true } } : {}),
      ...(has("logging") ? { logging: {} } : {}),
      ...(has("completions") ? { completions: {} } : {}),
    };
  }

  /** The upstreams and where each stands. */
  upstreams(): readonly Upstream[] {
    return this.pool.list();
  }

  /** Records one audit event; a failing sink is reported, and the caller refuses the call. */
  async audit(eventType: string, fields: Record<string, unknown>): Promise<void> {
    await this.#audit.record(eventType, fields);
  }

  /** Writes one line to the log (stderr). */
  log(line: string): void {
    this.#log(line);
  }

  /**
   * Says that hidden characters were taken out of what `server` sent: a few lines, then at most one a second
   * per server, the rest counted. Every message of a server can carry them (each log line, progress
   * message, answer), so one server could otherwise write the proxy's log as fast as it can send.
   */
  logHiddenText(server: string, line: string): void {
    let say = this.#hiddenTextLines.get(server);
    if (say === undefined) {
      say = budgetLines(
        (said) => this.#log(said),
        (count) => `upstream \`${server}\`: ${count} more messages with hidden characters removed (not each said)`,
        HIDDEN_TEXT_LINES,
      );
      this.#hiddenTextLines.set(server, say);
    }
    say(line);
  }

  /** Closes every session and upstream. */
  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.server.close().catch(() => undefined)));
    // closing a session withdrew its waiting calls: let their last events reach the audit sink before the
    // caller closes it (bounded: a gate that does not end in time is left behind)
    await this.#settleGating(CLOSE_GATING_MS);
    await this.pool.close();
  }

  async #settleGating(boundMs: number): Promise<void> {
    if (this.#gating.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)));
    await Promise.race([Promise.allSettled([...this.#gating]), bound]);
    clearTimeout(timer);
  }

  async #observePins(server: string): Promise<void> {
    const upstream = this.pool.get(server);
    if (upstream === undefined) return;
    try {
      const changes = await this.pinning.observe(server, upstream.tools);
      // marked before the first await: a listing checked meanwhile does not report them again
      const fresh = this.#reportedChanges.unreported(server, changes);
      for (const [i, change] of fresh.entries()) {
        const held = this.options.acceptToolChanges === true ? "accepted (--accept-tool-changes)" : "held behind ask";
        this.#log(`upstream \`${server}\`: tool \`${change.tool}\` changed (${change.fields.join(", ")}): ${held}`);
        try {
          await this.#audit.record("tool_definition_changed", {
            server,
            tool: change.tool,
            fields: change.fields,
            before: change.before,
            after: change.after,
            accepted: this.options.acceptToolChanges === true,
          });
        } catch (err) {
          // not audited (nor those after it): the next listing that shows them tries again. The pins were
          // checked, so this is no failure of the upstream's: the change stands as decided above
          for (const unsaid of fresh.slice(i)) this.#reportedChanges.unmark(server, unsaid);
          this.#log(
            `upstream \`${server}\`: the change of tool \`${change.tool}\` could not be audited (${messageOf(err)}): the tool is ${held}, and the next listing of the server records the change`,
          );
          return;
        }
      }
    } catch (err) {
      this.#reportFailure(server, "pins", `tool pins could not be checked (every call to it asks): ${messageOf(err)}`);
    }
  }

  /** Tools that cannot be served under their name (`prefix_tools: never`, or a prefixed name taken): said once. */
  #reportUnserved(): void {
    for (const { server, name, servedBy } of this.catalog.tools().dropped) {
      const key = `${server}\u0000${name}`;
      if (this.#reportedUnserved.has(key)) continue;
      this.#reportedUnserved.add(key);
      this.#log(
        `upstream \`${server}\`: tool \`${name}\` is not served: \`${servedBy}\` offers a tool of the same name (prefix_tools: ${this.options.prefixTools ?? PROXY_DEFAULTS.prefixTools})`,
      );
    }
  }

  /** An upstream up after the proxy began serving (late, or started again): said, its tools announced. */
  async #lateStart(server: string, restarted: boolean): Promise<void> {
    const tools = this.pool.get(server)?.tools.length ?? 0;
    // said once its tools are served (pins checked, the union rebuilt, sessions told)
    await this.#toolsChanged(server);
    this.#log(
      `upstream \`${server}\`: ${restarted ? "started again" : "connected"} (${tools} tools)${restarted ? "" : ", after the others"}`,
    );
    const upstream = this.pool.get(server);
    if (!restarted && upstream !== undefined && upstream.spec.trusted !== true) this.#sayReadOnlySetAside(upstream);
  }

  async #toolsChanged(server: string): Promise<void> {
    await this.#observePins(server);
    this.catalog.invalidate();
    if (this.#started) this.#reportUnserved();
    this.#broadcast({ method: "notifications/tools/list_changed" });
  }

  /**
   * How the gate tells the session runtime a call is about to run: the results this session's calls returned
   * before it are told first, so the runtime counts and judges it with all of them.
   */
  #admit(observer: CallObserver): ExecutionAdmission {
    return (sessionId, request) => {
      this.observations.settle(sessionId);
      return observer.executed(sessionId, request);
    };
  }

  #reportFailure(server: string, phase: string, message: string): void {
    this.#log(`upstream \`${server}\` ${phase === "closed" ? "stopped" : "failed"}: ${message}`);
    if (phase === "closed") {
      this.catalog.invalidate();
      this.#broadcast({ method: "notifications/tools/list_changed" });
    }
    Promise.resolve(this.#audit.record("upstream_failed", { server, phase, message })).catch((err: unknown) =>
      this.#log(`audit sink failed: ${messageOf(err)}`),
    );
  }

  /**
   * A notification from an upstream: list changes go to every session; a resource update to the sessions
   * subscribed to it; anything else (logging above all) to the session whose call it belongs to, on that
   * call's stream, and to nobody when calls of several sessions are in flight to that server.
   */
  #forwardUpstreamNotification(server: string, sent: Notification): void {
    if (sent.method.endsWith("/list_changed")) {
      this.catalog.invalidate();
      this.#broadcast(sent);
      return;
    }
    // a log line's logger and data, a resource's URI: tag characters and bidi controls out, as of a result
    const { said: notification, removed } = this.#withoutHiddenText(server, sent);
    if (notification.method === "notifications/resources/updated") {
      const uri = notification.params?.["uri"];
      if (typeof uri !== "string") return;
      for (const id of this.subscriptions.subscribers(server, uri)) {
        this.sessions
          .get(id)
          ?.server.notification(notification)
          .catch(() => undefined);
      }
      return;
    }
    const route = routeUpstreamMessage(this.sessions.values(), server);
    // a log line is the upstream's words to the agent: each session it goes to reads it
    const told =
      route.kind === "call" || route.kind === "only" ? [route.session] : route.kind === "idle" ? route.sessions : [];
    if (notification.method === "notifications/message")
      for (const session of told) observeLog(this, session.id, server, notification.params, removed);
    if (route.kind === "call") route.call.notify(notification as ServerNotification);
    else if (route.kind === "only") route.session.server.notification(notification).catch(() => undefined);
    else if (route.kind === "idle") this.#broadcast(notification);
    else {
      this.#log(
        `upstream \`${server}\`: \`${notification.method}\` not forwarded: calls of ${route.sessions.length} sessions are in flight to it (whose it is cannot be told)`,
      );
    }
  }

  /**
   * A notification or request of an upstream's with tag characters and bidi controls taken out of its
   * params (`withoutSmuggledText`: its `_meta` then says how many), said on the log; `removed`: some were.
   */
  #withoutHiddenText<T extends { readonly method: string; readonly params?: unknown }>(
    server: string,
    message: T,
  ): { readonly said: T; readonly removed: boolean } {
    const params = message.params;
    if (typeof params !== "object" || params === null) return { said: message, removed: false };
    const { result, removed } = withoutSmuggledText(params);
    if (removed === undefined) return { said: message, removed: false };
    this.logHiddenText(
      server,
      `upstream \`${server}\`: \`${message.method}\`: ${removed.characters} hidden characters removed`,
    );
    return { said: { ...message, params: result }, removed: true };
  }

  /** A closed session's subscriptions end; the upstream is unsubscribed where it was the last subscriber. */
  #dropSubscriptions(sessionId: string): void {
    for (const { server, uri } of this.subscriptions.forget(sessionId)) {
      this.pool
        .request(server, "resources/unsubscribe", { uri })
        .catch((err: unknown) =>
          this.#log(`upstream \`${server}\`: unsubscribe from \`${uri}\` failed: ${messageOf(err)}`),
        );
    }
  }

  #broadcast(notification: Notification): void {
    for (const session of this.sessions.values()) {
      session.server.notification(notification).catch(() => undefined);
    }
  }

  /**
   * Sampling, elicitation and the like go to the one session with a call in flight to that server, on that
   * call's stream; with no call in flight, to the only session connected. When that cannot be told (calls
   * of several sessions in flight, or several sessions and none), the upstream gets an error: a request
   * must never reach another agent's client.
   */
  async #forwardUpstreamRequest(server: string, request: JSONRPCRequest, signal: AbortSignal): Promise<Result> {
    // a sampling request's system prompt and messages, an elicitation's message and form: hidden text out
    const { said, removed } = this.#withoutHiddenText(server, request);
    const params = said.params as Record<string, unknown> | undefined;
    const outgoing = { method: request.method, ...(params ? { params } : {}) };
    const options = { signal, timeout: this.options.consentTimeoutMs ?? PROXY_DEFAULTS.consentTimeoutMs };
    const route = routeUpstreamMessage(this.sessions.values(), server);
    // what the request says reaches the agent's client (its model reads a sampling request): the session reads it
    if (route.kind === "call" || route.kind === "only")
      observeUpstreamRequest(this, route.session.id, server, request.method, params, removed);
    // the agent client's own error goes back in its own words (see `relayedError`)
    const relay = (err: unknown): never => {
      throw err instanceof McpError ? relayedError(err) : err;
    };
    if (route.kind === "call") return route.call.request(outgoing as ServerRequest, options).catch(relay);
    if (route.kind === "only") return route.session.server.request(outgoing, ResultSchema, options).catch(relay);
    const why =
      route.kind === "ambiguous"
        ? `calls of ${route.sessions.length} agent sessions are in flight to \`${server}\``
        : route.sessions.length === 0
          ? "no agent client is connected"
          : `${route.sessions.length} agent sessions are connected and none has a call in flight to \`${server}\``;
    this.#log(`upstream \`${server}\`: \`${request.method}\` refused: ${why}`);
    throw agentError(ErrorCode.InvalidRequest, `no agent client to answer \`${request.method}\`: ${why}`);
  }
}

/** Creates the proxy; call `start()` before serving sessions. */
export function createProxy(options: AcpProxyOptions): AcpProxy {
  return new AcpProxy(options);
}

export { newId };

/** A restart delay as said on the log: `1 s`, `2.5 s`. */
function formatDelay(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
