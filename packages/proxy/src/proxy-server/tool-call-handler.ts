import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ErrorCode,
  McpError,
  ResultSchema,
  type CallToolRequest,
  type CallToolResult,
  type Progress,
  type Result,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { pipelineRefusal } from "@acp/core";
import { PROXY_DEFAULTS } from "../config/proxy-config.js";
import { injectCallCredentials, withoutSecretValues } from "../gate/call-credentials.js";
import { gateToolCall } from "../gate/gate-tool-call.js";
import { toolError } from "../gate/tool-error.js";
import { messageOf } from "../upstream/upstream-pool.js";
import type { AbortWatch } from "../upstream/upstream-relay.js";
import { newId, sessionAgent, type AcpProxy, type ProxySession } from "./acp-proxy.js";
import { echoed, relayedError } from "./agent-error.js";
import { createProgressRelay, type ProgressRelay } from "./progress-relay.js";
import { toldProgress } from "./upstream-text.js";
import { createInflightCall } from "./session-routing.js";
import { ContentReader } from "./readable-content.js";
import { SUBMIT_PLAN_NAME, handleSubmitPlan } from "./submit-plan.js";
import { withoutSmuggledText } from "./smuggled-text.js";
import { annotationsToDecideWith } from "./server-annotations.js";

type Extra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1];

/** What a `tools/call` handler gets from the route that received the call (the SDK server's, or the fast path). */
export interface CallContext {
  /** Aborted when the client cancels the call or goes away. */
  readonly signal: AbortSignal;
  /**
   * The same cancellation as `signal`, watched without making it: the fast path makes its signal only when
   * something asks for it (`CallAbort`). Absent: `signal` is watched.
   */
  readonly abort?: AbortWatch;
  /** A notification on the call's own response stream. */
  sendNotification(notification: ServerNotification): Promise<void>;
  /** A request to the client on the call's own response stream (sampling, elicitation); the result unchanged. */
  sendRequest(request: ServerRequest, options: RequestOptions): Promise<Result>;
}

/** The context of a call the SDK server received. */
export function contextOf(extra: Extra): CallContext {
  return {
    signal: extra.signal,
    sendNotification: (notification) => extra.sendNotification(notification),
    sendRequest: (request, options) => extra.sendRequest(request, ResultSchema, options),
  };
}

/**
 * One downstream `tools/call`: resolve the exposed name, gate it (decide, maybe ask a person, with
 * progress ticks while waiting), forward the approved arguments, return the upstream result unchanged.
 * A crashed or hung upstream, a failed audit write or an unknown tool all end in a tool error.
 */
export async function handleToolCall(
  proxy: AcpProxy,
  session: ProxySession,
  request: CallToolRequest,
  extra: CallContext,
): Promise<CallToolResult> {
  session.lastActive = Date.now();
  const agent = sessionAgent(proxy, session);
  if (request.params.name === SUBMIT_PLAN_NAME && proxy.options.plans !== undefined) {
    proxy.observations.settle(session.id);
    return handleSubmitPlan(proxy, session, request, extra.signal, agent);
  }
  const target = proxy.catalog.tools().resolve(request.params.name);
  if (target === undefined) {
    // not decided, nor audited: no server serves it (docs/reference/audit.md); quoted back escaped
    return toolError(`unknown tool \`${echoed(request.params.name)}\` (see tools/list)`);
  }
  // one batch (or a client not waiting for answers) must not put thousands of calls in flight at once:
  // counted from here, before the first await, so a batch's calls are counted in the order they came
  const max = proxy.options.maxCallsInFlight ?? PROXY_DEFAULTS.maxCallsInFlight;
  if (session.inFlight >= max) return refuseOverCap(proxy, session, request, target, agent, max);
  session.inFlight += 1;
  try {
    return await gateAndForward(proxy, session, request, extra, target, agent);
  } finally {
    session.inFlight -= 1;
  }
}

/** The upstream tool a call names, as the catalog resolved it. */
type Target = NonNullable<ReturnType<ReturnType<AcpProxy["catalog"]["tools"]>["resolve"]>>;

/**
 * A call over the session's cap on calls in flight: answered at once with a tool error, never decided nor
 * forwarded, and audited as every refusal is (`tool_call_intercepted`, then `policy_evaluated` refusing it,
 * reason `pipeline:too_many_calls_in_flight`). A failing audit write is logged: the call is refused anyway.
 */
async function refuseOverCap(
  proxy: AcpProxy,
  session: ProxySession,
  request: CallToolRequest,
  target: Target,
  agent: string | undefined,
  max: number,
): Promise<CallToolResult> {
  const message = `too many calls in flight in this session (${max}): wait for some to finish before calling again (proxy.max_calls_in_flight)`;
  const decision = pipelineRefusal("too_many_calls_in_flight", message);
  const { reasons } = decision;
  const base = {
    call_id: newId("call"),
    session_id: session.id,
    server: target.server,
    tool: target.name,
    ...(agent !== undefined ? { agent } : {}),
  };
  try {
    await proxy.audit("tool_call_intercepted", { ...base, arguments: request.params.arguments ?? {} });
    await proxy.audit("policy_evaluated", {
      ...base,
      decision: "refuse",
      policy_rule: null,
      category: decision.category,
      risk_level: decision.risk_level,
      reasons,
    });
  } catch (err) {
    proxy.log(
      `call \`${target.name}\` on \`${target.server}\` refused (too many in flight), unrecorded: ${messageOf(err)}`,
    );
  }
  return toolError(message, decision);
}

/** A call within the cap: decide it (maybe asking a person), forward it, record its end. */
async function gateAndForward(
  proxy: AcpProxy,
  session: ProxySession,
  request: CallToolRequest,
  extra: CallContext,
  target: Target,
  agent: string | undefined,
): Promise<CallToolResult> {
  const token = request.params._meta?.progressToken;
  // what the upstream says in its progress reaches the agent: the session runtime is told it too
  const relay =
    token !== undefined
      ? toldProgress(
          proxy,
          session.id,
          target.server,
          createProgressRelay(token, (n) => extra.sendNotification(n)),
        )
      : undefined;
  const callId = newId("call");
  // a held tool (its definition changed since it was pinned) is decided with its pinned annotations: a flip
  // to `readOnlyHint: true` must not make a write a read before a person accepted the new definition
  const annotations = annotationsToDecideWith(
    proxy.pinning.served(target.server, target.item)["annotations"],
    proxy.pool.get(target.server)?.spec.trusted === true,
  );
  const base = { call_id: callId, session_id: session.id, server: target.server, tool: target.name };
  // counted as in flight (where the server's sampling, elicitation and log lines go) once forwarded only:
  // a call waiting for a person must not make another session's messages ambiguous
  const inflight = createInflightCall(target.server, extra);
  const heartbeat = startHeartbeat(proxy, relay, target.name);
  try {
    const verdict = await gateToolCall(proxy.gate, {
      callId,
      server: target.server,
      tool: target.name,
      arguments: request.params.arguments ?? {},
      ...(annotations !== undefined ? { annotations } : {}),
      sessionId: session.id,
      ...(agent !== undefined ? { agent } : {}),
      ...(session.agent !== undefined ? { tokenAgent: session.agent } : {}),
      // asked for only by a consent wait: an accepted call makes no AbortSignal (the fast path's is lazy)
      get signal() {
        return extra.signal;
      },
      ...(relay !== undefined ? { onProgress: (message: string) => relay.waiting(message) } : {}),
    });
    clearInterval(heartbeat);
    if (verdict.kind === "answer") return verdict.result;
    // the later events of the call carry what it was decided as (§7.4): agent, category, risk, rule, request
    const decided = { ...base, ...(agent !== undefined ? { agent } : {}), ...verdict.decided };
    await proxy.audit("tool_call_forwarded", { ...decided, arguments: verdict.arguments });
    const injected = await injectCredentials(proxy, target.server, target.name, verdict.arguments, decided);
    if (injected.kind === "answer") return injected.result;
    session.calls.add(inflight);
    const now = proxy.options.now ?? (() => new Date());
    const sentAt = now().getTime();
    // §7.4 `response_time_ms` of tool_call_completed: how long the upstream took, on the proxy's clock
    const completed = (): Record<string, unknown> => ({
      ...decided,
      response_time_ms: Math.max(0, now().getTime() - sentAt),
    });
    const raw = await forward(
      proxy,
      target.server,
      { ...request.params, name: target.name, arguments: injected.arguments },
      extra,
      relay !== undefined ? { relay, token: `acp:${callId}` } : undefined,
      completed,
    ).catch((err: unknown) => {
      // an upstream's JSON-RPC error reaches the agent in its own words: the runtime reads them as a result
      if (err instanceof McpError && !isTransportFailure(err))
        observeLater(proxy, session.id, target.server, target.name, verdict.call, errorResult(err), hidden(err));
      throw err;
    });
    // the call ran but its end could not be recorded: that answer stands, the event is not tried again
    if (raw.unrecorded === true) return raw.result;
    // an upstream's answer was scrubbed as it arrived (createMessageScrubber); the proxy's own error text was not
    const secretless = raw.error !== undefined ? withoutSecrets(proxy, raw.result) : raw.result;
    // tag characters and bidi controls in its text are taken out before the agent (or the runtime) reads it
    const { result, removed } = withoutSmuggledText(secretless);
    const unrecorded = await auditCompleted(proxy, target.server, target.name, {
      ...completed(),
      is_error: result.isError === true,
      ...(raw.error !== undefined ? { error: raw.error } : {}),
      ...(removed !== undefined ? { hidden_text_removed: removed.characters } : {}),
    });
    if (unrecorded !== undefined) return unrecorded;
    observeLater(proxy, session.id, target.server, target.name, verdict.call, result, removed !== undefined);
    await relay?.flush();
    await inflight.settled();
    return result;
  } catch (err) {
    if (err instanceof McpError && !isTransportFailure(err)) throw relayedError(err);
    const message = messageOf(err);
    proxy.log(`call \`${target.name}\` on \`${target.server}\` failed: ${message}`);
    return toolError(`the call could not be completed: ${message}`);
  } finally {
    clearInterval(heartbeat);
    session.calls.delete(inflight);
  }
}

async function forward(
  proxy: AcpProxy,
  server: string,
  params: CallToolRequest["params"],
  extra: CallContext,
  progress: { readonly relay: ProgressRelay; readonly token: string } | undefined,
  /** The fields of the call's `tool_call_completed` event. */
  completed: () => Record<string, unknown>,
): Promise<{ readonly result: CallToolResult; readonly error?: string; readonly unrecorded?: true }> {
  const { _meta, ...rest } = params;
  const meta =
    _meta !== undefined ? Object.fromEntries(Object.entries(_meta).filter(([k]) => k !== "progressToken")) : {};
  // upstream progress is asked for with the proxy's own token (`acp:<call id>`), never the client's
  if (progress !== undefined) meta["progressToken"] = progress.token;
  const upstreamParams = { ...rest, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) };
  try {
    const result = await proxy.pool.relay(server, "tools/call", upstreamParams, {
      signal: extra.abort ?? extra.signal,
      timeoutMs: proxy.options.callTimeoutMs ?? PROXY_DEFAULTS.callTimeoutMs,
      maxTotalMs: proxy.options.callMaxMs ?? PROXY_DEFAULTS.callMaxMs,
      ...(progress !== undefined
        ? { progress: { token: progress.token, onProgress: (p: Progress) => progress.relay.upstream(p) } }
        : {}),
    });
    return { result: result as CallToolResult };
  } catch (err) {
    if (err instanceof McpError && !isTransportFailure(err)) {
      // recorded as the agent reads it: without the tag characters and bidi controls it carried, counted
      const { result: told, removed } = withoutSmuggledText({ message: err.message, data: err.data });
      const fields = {
        ...completed(),
        is_error: true,
        error: told.message,
        ...(removed !== undefined ? { hidden_text_removed: removed.characters } : {}),
      };
      const unrecorded = await auditCompleted(proxy, server, String(params.name), fields);
      if (unrecorded !== undefined) return { result: unrecorded, unrecorded: true };
      throw err;
    }
    const why =
      err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number)
        ? "did not answer in time"
        : "failed";
    // the caller writes the one tool_call_completed event, with this error in it
    return { result: toolError(`upstream \`${server}\` ${why}: ${messageOf(err)}`), error: messageOf(err) };
  }
}

/**
 * Writes a forwarded call's `tool_call_completed` event. When that write fails the call has already reached
 * the upstream: the agent is told it ran and that its result is withheld, never that it "could not be
 * completed", which invites running a payment or a send a second time. Returns that answer, or `undefined`
 * once recorded.
 */
async function auditCompleted(
  proxy: AcpProxy,
  server: string,
  tool: string,
  fields: Record<string, unknown>,
): Promise<CallToolResult | undefined> {
  try {
    await proxy.audit("tool_call_completed", fields);
    return undefined;
  } catch (err) {
    const why = messageOf(err);
    proxy.log(`call \`${tool}\` on \`${server}\` ran, but it could not be recorded in the audit log: ${why}`);
    return toolError(
      `the call ran on \`${server}\`, but it could not be recorded in the audit log (${why}), so its result ` +
        "is withheld; it has taken effect: do not run it again",
    );
  }
}

/** Injects the configured credentials into an accepted call; a failure refuses it (nothing forwarded). */
async function injectCredentials(
  proxy: AcpProxy,
  server: string,
  tool: string,
  args: Record<string, unknown>,
  base: Record<string, unknown>,
): Promise<{ kind: "forward"; arguments: Record<string, unknown> } | { kind: "answer"; result: CallToolResult }> {
  const step = await injectCallCredentials(
    proxy.options.credentials,
    { record: (t, f) => proxy.audit(t, f) },
    {
      server,
      tool,
      arguments: args,
      base,
    },
  );
  if (step.kind === "forward") return { kind: "forward", arguments: step.arguments };
  proxy.log(`credentials for \`${tool}\` on \`${server}\` could not be injected: ${step.message}`);
  return {
    kind: "answer",
    result: toolError(`refused: the credentials for this call could not be injected: ${step.message}`),
  };
}

/** The upstream's answer with every injected secret value replaced, so the agent never sees one. */
function withoutSecrets(proxy: AcpProxy, result: CallToolResult): CallToolResult {
  return withoutSecretValues(proxy.options.credentials, result);
}

/** {@link observe}, after the reply is out; the next decision of the session runs it first if still queued. */
function observeLater(
  proxy: AcpProxy,
  sessionId: string,
  server: string,
  tool: string,
  call: number | undefined,
  result: CallToolResult,
  hiddenText: boolean,
): void {
  proxy.observations.add(sessionId, () => {
    // a session that closed meanwhile is gone from the runtime: nothing to tell it
    if (proxy.sessions.has(sessionId)) observe(proxy, sessionId, server, tool, call, result, hiddenText);
  });
}

/** Whether an upstream's JSON-RPC error carried tag characters or bidi controls (taken out as it is relayed). */
function hidden(err: McpError): boolean {
  return withoutSmuggledText({ message: err.message, data: err.data }).removed !== undefined;
}

/** What the agent reads of an upstream's JSON-RPC error, as a result: its message, and its `data`. */
function errorResult(err: McpError): CallToolResult {
  const relayed = relayedError(err);
  const data: unknown = relayed.data;
  return {
    content: [{ type: "text", text: relayed.message }],
    ...(data !== undefined ? { structuredContent: { data } } : {}),
    isError: true,
  };
}

/**
 * Tells the observer (the session runtime) what a call returned (what the agent can read of it:
 * `ContentReader`), naming the call (`call`: its `seq`, which the runtime gave when the gate let it through
 * and counted it, before it was forwarded). What it cannot tell whole (structured content too deep to write as
 * JSON, a blob past the decoding limit, an observer that throws) it reports as unreadable, so the runtime
 * judges as if the result held anything; logged too.
 */
function observe(
  proxy: AcpProxy,
  sessionId: string,
  server: string,
  tool: string,
  call: number | undefined,
  result: CallToolResult,
  hiddenText: boolean,
): void {
  const observer = proxy.options.observer;
  if (observer === undefined) return;
  try {
    const reader = new ContentReader();
    const text = (result.content ?? []).map((c) => reader.block(c)).join("\n");
    let structured = "";
    let unread = reader.cut;
    try {
      structured = result.structuredContent === undefined ? "" : JSON.stringify(result.structuredContent);
    } catch (err) {
      unread = `its structured content could not be read: ${messageOf(err)}`;
    }
    const told = structured === "" ? text : `${text}\n${structured}`;
    // a tool's error speaks of the call, not for the server: untrusted even from a trusted server
    // text smuggled in (tag characters, bidi controls) was taken out: the runtime learns it was tried
    const options = {
      ...(result.isError === true ? { error: true } : {}),
      ...(hiddenText ? { hiddenTextRemoved: true } : {}),
      ...(call !== undefined ? { call } : {}),
    };
    if (Object.keys(options).length > 0) observer.result(sessionId, server, tool, told, options);
    else observer.result(sessionId, server, tool, told);
    if (unread !== undefined) unreadable(proxy, sessionId, server, tool, unread);
  } catch (err) {
    unreadable(proxy, sessionId, server, tool, messageOf(err));
  }
}

/** A result the runtime could not be told whole: logged, and reported so that it judges as if it held anything. */
export function unreadable(proxy: AcpProxy, sessionId: string, server: string, tool: string, why: string): void {
  proxy.log(`the session runtime could not record \`${tool}\`: ${why}`);
  try {
    proxy.options.observer?.unreadable?.(sessionId, server, tool, why);
  } catch (err) {
    proxy.log(`the session runtime could not be told that \`${tool}\` went unrecorded: ${messageOf(err)}`);
  }
}

/** Errors of the connection rather than of the call: they become tool errors, never a hang. */
function isTransportFailure(err: McpError): boolean {
  return err.code === (ErrorCode.ConnectionClosed as number) || err.code === (ErrorCode.RequestTimeout as number);
}

function startHeartbeat(proxy: AcpProxy, relay: ProgressRelay | undefined, tool: string): NodeJS.Timeout | undefined {
  if (relay === undefined) return undefined;
  const every = proxy.options.progressIntervalMs ?? 5_000;
  return setInterval(() => relay.waiting(`waiting for a decision on \`${tool}\``), every);
}
