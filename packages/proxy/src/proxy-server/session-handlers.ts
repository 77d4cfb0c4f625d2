import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ProgressToken,
  type Result,
} from "@modelcontextprotocol/sdk/types.js";
import { printable } from "@acp/core";
import { whyUriRefused } from "../aggregate/resource-name.js";
import { gateToolCall } from "../gate/gate-tool-call.js";
import { SUBMIT_PLAN_TOOL } from "./submit-plan.js";
import type { AcpProxy, ProxySession } from "./acp-proxy.js";
import { newId, sessionAgent } from "./acp-proxy.js";
import { createProgressRelay } from "./progress-relay.js";
import type { ContentReader } from "./readable-content.js";
import { agentError, echoed, hadHiddenText, relayedError } from "./agent-error.js";
import { contextOf, handleToolCall } from "./tool-call-handler.js";
import { errorText, observeRead, type ReadOptions } from "./upstream-text.js";
import { withoutSmuggledText } from "./smuggled-text.js";

type Extra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1];

/** Registers the downstream request handlers of one session: tools gated, the rest passed through. */
export function registerSessionHandlers(proxy: AcpProxy, session: ProxySession): void {
  const server = session.server;
  const caps = proxy.capabilities();
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...listedTools(proxy), ...(proxy.options.plans !== undefined ? [SUBMIT_PLAN_TOOL] : [])],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    handleToolCall(proxy, session, request, contextOf(extra)),
  );
  if (caps.prompts) registerPromptHandlers(proxy, session);
  if (caps.resources) registerResourceHandlers(proxy, session);
  if (caps.logging) {
    server.setRequestHandler(SetLevelRequestSchema, async (request, extra) => {
      const withLogging = proxy.pool.connected().filter((u) => u.capabilities?.logging !== undefined);
      await Promise.all(
        withLogging.map((u) =>
          proxy.pool
            .request(u.spec.name, "logging/setLevel", request.params, { signal: extra.signal })
            .catch((err: unknown) => {
              // in its own words, without hidden text (as every relayed error): the runtime reads them too
              const relayed = err instanceof McpError ? relayedError(err) : err;
              const name = u.spec.name;
              observeRead(
                proxy,
                session.id,
                name,
                "logging/setLevel",
                undefined,
                () => errorText(relayed),
                told(relayed),
              );
              throw relayed;
            }),
        ),
      );
      return {};
    });
  }
  if (caps.completions) {
    server.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
      const ref = request.params.ref;
      let owner: string | undefined;
      let params = request.params;
      if (ref.type === "ref/prompt") {
        const target = (await proxy.catalog.prompts()).resolve(ref.name);
        if (target === undefined) throw agentError(ErrorCode.InvalidParams, `unknown prompt \`${echoed(ref.name)}\``);
        owner = target.server;
        params = { ...request.params, ref: { ...ref, name: target.name } };
      } else {
        // a URI (or template) no listing may name is not routed to a template's or the only resource server
        refuseUnreadableUri("completion/complete", ref.uri);
        owner = await proxy.catalog.serverForUri(ref.uri);
        if (owner === undefined) throw agentError(ErrorCode.InvalidParams, `no upstream serves \`${echoed(ref.uri)}\``);
      }
      const server = owner;
      const answer = await passThrough(proxy, server, "completion/complete", params, extra).catch((err: unknown) => {
        observeRead(proxy, session.id, server, "completion/complete", undefined, () => errorText(err), told(err));
        throw err;
      });
      // the values offered are the upstream's words too: a client may put one in front of the model
      const offered = completionText(answer.result);
      if (offered !== "" || answer.hiddenTextRemoved) {
        observeRead(proxy, session.id, server, "completion/complete", undefined, () => offered, answer);
      }
      return answer.result;
    });
  }
}

/** What the agent's client reads of a completion: the values offered. */
function completionText(result: Result): string {
  const completion = result["completion"];
  const values =
    typeof completion === "object" && completion !== null ? (completion as { values?: unknown }).values : [];
  return listOf(values)
    .filter((v): v is string => typeof v === "string")
    .join("\n");
}

/**
 * The tools the agent is served. A tool whose definition changed since it was pinned (a possible rug pull)
 * is served as pinned — every field (description, title, input and output schema, annotations, `_meta`) as
 * first seen — until a person accepts the new one: text an upstream slipped into any part of a definition
 * does not reach the agent's model before a person has seen it. One whose pinned definition hides text from a
 * person (a pin recorded before such definitions were refused) is not served at all meanwhile.
 */
function listedTools(proxy: AcpProxy): readonly Result[] {
  const index = proxy.catalog.tools();
  return index.exposed.flatMap((tool) => {
    const target = index.resolve(tool.name);
    if (target === undefined) return [tool];
    // a pinned definition that hides text from a person is not served in the new one's stead either
    if (proxy.pinning.withheld(target.server, target.item) !== undefined) return [];
    const served = proxy.pinning.served(target.server, target.item);
    return [served === target.item ? tool : { ...served, name: tool.name }];
  });
}

function registerPromptHandlers(proxy: AcpProxy, session: ProxySession): void {
  const server = session.server;
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [...(await proxy.catalog.prompts()).exposed],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    let target = (await proxy.catalog.prompts()).resolve(request.params.name);
    if (target === undefined) {
      proxy.catalog.invalidate();
      target = (await proxy.catalog.prompts()).resolve(request.params.name);
    }
    if (target === undefined) {
      throw agentError(ErrorCode.InvalidParams, `unknown prompt \`${echoed(request.params.name)}\``);
    }
    const params = { ...request.params, name: target.name };
    const owner = target.server;
    const { result, hiddenTextRemoved } = await passThrough(proxy, owner, "prompts/get", params, extra).catch(
      (err: unknown) => {
        // an upstream's error reaches the agent in its own words: the runtime reads them too
        observeRead(proxy, session.id, owner, "prompts/get", undefined, () => errorText(err), told(err, true));
        throw err;
      },
    );
    observeRead(proxy, session.id, owner, "prompts/get", undefined, (reader) => promptText(reader, result), {
      hiddenTextRemoved,
    });
    return result;
  });
}

function registerResourceHandlers(proxy: AcpProxy, session: ProxySession): void {
  const server = session.server;
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [...(await proxy.catalog.resources()).resources],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [...(await proxy.catalog.resourceTemplates())],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const uri = request.params.uri;
    refuseUnreadableUri("resources/read", uri);
    const owner = await proxy.catalog.serverForUri(uri);
    if (owner === undefined) throw agentError(-32002, `resource not found: no upstream serves \`${echoed(uri)}\``);
    const approved = await gateResourceRead(proxy, session, owner, uri, request.params._meta?.progressToken, extra);
    if (approved.uri !== uri) refuseUnreadableUri("resources/read", approved.uri);
    if (approved.uri !== uri && (await proxy.catalog.serverForUri(approved.uri)) !== owner) {
      // the person edited the URI: it is read from the server they approved it on, or not at all
      throw agentError(ErrorCode.InvalidRequest, `the approved \`${approved.uri}\` is not served by \`${owner}\``);
    }
    const params = { ...request.params, uri: approved.uri };
    const { result, hiddenTextRemoved } = await passThrough(proxy, owner, "resources/read", params, extra).catch(
      (err: unknown) => {
        observeRead(proxy, session.id, owner, "resources/read", approved.call, () => errorText(err), told(err, true));
        throw err;
      },
    );
    const contents = (reader: ContentReader): string =>
      listOf(result["contents"])
        .map((c) => reader.resource(c))
        .filter((t) => t !== "")
        .join("\n");
    observeRead(proxy, session.id, owner, "resources/read", approved.call, contents, { hiddenTextRemoved });
    return result;
  });
  registerSubscriptionHandlers(proxy, session);
}

/**
 * Refuses a `resources/read` (or `resources/subscribe`) of a URI no listing may name ({@link whyUriRefused}:
 * an invisible, control or bidi character, a line break, a space at either end, empty, over 2,048 characters)
 * before it is routed, decided or shown to a person: routed as a template's or the only resource server's, it
 * would reach the consent prompt and the audit reading as something it is not. A `completion/complete` of
 * such a `ref/resource` is refused the same way. Like a call to an unknown tool, it reaches no upstream and
 * no decision, so nothing is audited (docs/reference/audit.md). The URI is shown escaped, cut at 80.
 */
function refuseUnreadableUri(
  method: "resources/read" | "resources/subscribe" | "completion/complete",
  uri: string,
): void {
  const why = whyUriRefused(uri);
  if (why === undefined) return;
  const shown = printable(JSON.stringify(uri.length > 80 ? `${uri.slice(0, 80)}…` : uri));
  throw agentError(ErrorCode.InvalidParams, `${method} of ${shown} is refused: ${why}, so it cannot be read as it is`);
}

/**
 * `resources/subscribe` and `resources/unsubscribe`, counted across sessions: the upstream is subscribed
 * by the first session and unsubscribed when the last one leaves (or closes).
 */
function registerSubscriptionHandlers(proxy: AcpProxy, session: ProxySession): void {
  const owner = async (uri: string): Promise<string> => {
    const server = await proxy.catalog.serverForUri(uri);
    if (server === undefined) throw agentError(-32002, `resource not found: no upstream serves \`${echoed(uri)}\``);
    return server;
  };
  session.server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    refuseUnreadableUri("resources/subscribe", uri);
    const server = await owner(uri);
    // the proxy offers subscribing when any server does; one that does not is not asked (it may never answer)
    if (proxy.pool.get(server)?.capabilities?.resources?.subscribe !== true) {
      throw agentError(
        ErrorCode.MethodNotFound,
        `resources/subscribe: upstream \`${server}\`, which serves \`${echoed(uri)}\`, does not support subscribing`,
      );
    }
    if (proxy.subscriptions.add(server, uri, session.id)) {
      try {
        await passThrough(proxy, server, "resources/subscribe", request.params, extra);
      } catch (err) {
        proxy.subscriptions.remove(server, uri, session.id);
        // an upstream's error reaches the agent in its own words: the runtime reads them too
        observeRead(proxy, session.id, server, "resources/subscribe", undefined, () => errorText(err), told(err));
        throw err;
      }
    }
    return {};
  });
  session.server.setRequestHandler(UnsubscribeRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const server = await owner(uri);
    if (proxy.subscriptions.remove(server, uri, session.id)) {
      await passThrough(proxy, server, "resources/unsubscribe", request.params, extra).catch((err: unknown) => {
        observeRead(proxy, session.id, server, "resources/unsubscribe", undefined, () => errorText(err), told(err));
        throw err;
      });
    }
    return {};
  });
}

/**
 * `resources/read` goes through `Decide` as tool `resources/read` with arguments `{uri}`, annotated
 * read-only: the method only reads (the proxy says so, not the server), so the policy's `category: read`
 * rules apply unless a rule names `resources/read` or a `classify:` entry says otherwise. While a person
 * decides, a client that gave a `progressToken` gets progress, as for a tool call. Resolves with the URI to
 * read (the one the person approved) and the read's `seq` in the session runtime (counted as the gate let it
 * through); a refusal is a JSON-RPC error.
 */
async function gateResourceRead(
  proxy: AcpProxy,
  session: ProxySession,
  server: string,
  uri: string,
  token: ProgressToken | undefined,
  extra: Extra,
): Promise<{ readonly uri: string; readonly call: number | undefined }> {
  const agent = sessionAgent(proxy, session);
  const relay = token !== undefined ? createProgressRelay(token, (n) => extra.sendNotification(n)) : undefined;
  const heartbeat =
    relay === undefined
      ? undefined
      : setInterval(
          () => relay.waiting(`waiting for a decision on \`resources/read\` of \`${uri}\``),
          proxy.options.progressIntervalMs ?? 5_000,
        );
  let verdict;
  try {
    verdict = await gateToolCall(proxy.gate, {
      callId: newId("call"),
      server,
      tool: "resources/read",
      arguments: { uri },
      annotations: { readOnlyHint: true },
      sessionId: session.id,
      ...(agent !== undefined ? { agent } : {}),
      ...(session.agent !== undefined ? { tokenAgent: session.agent } : {}),
      signal: extra.signal,
      ...(relay !== undefined ? { onProgress: (message: string) => relay.waiting(message) } : {}),
    });
  } finally {
    clearInterval(heartbeat);
  }
  await relay?.flush();
  if (verdict.kind === "answer") {
    const text = verdict.result.content.map((c) => (c.type === "text" ? c.text : "")).join(" ");
    throw agentError(ErrorCode.InvalidRequest, text !== "" ? text : "refused");
  }
  const approved = verdict.arguments["uri"];
  if (typeof approved !== "string" || approved === "") {
    throw agentError(ErrorCode.InvalidRequest, "the approved arguments of `resources/read` name no `uri`");
  }
  return { uri: approved, call: verdict.call };
}

/** What the agent reads of a prompt: its description and each message's content. */
function promptText(reader: ContentReader, result: Result): string {
  const description = typeof result["description"] === "string" ? result["description"] : "";
  const messages = listOf(result["messages"]).map((m) =>
    typeof m === "object" && m !== null ? reader.block((m as { content?: unknown }).content) : "",
  );
  return [description, ...messages].filter((t) => t !== "").join("\n");
}

function listOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

/**
 * How the runtime is told an upstream's error relayed to the agent (`passThrough`): as an error (`error`,
 * for a request the agent made of the server's content), and as having had hidden text when it had.
 */
function told(err: unknown, error = false): ReadOptions {
  return { ...(error ? { error: true } : {}), ...(hadHiddenText(err) ? { hiddenTextRemoved: true } : {}) };
}

/**
 * Sends a request to an upstream; its answer with tag characters and bidi controls taken out
 * (`hiddenTextRemoved`: some were, so the runtime counts it as instruction-like content), its JSON-RPC error
 * relayed in its own words (`relayedError`, {@link hadHiddenText}).
 */
async function passThrough(
  proxy: AcpProxy,
  server: string,
  method: string,
  params: unknown,
  extra: Extra,
): Promise<{ readonly result: Result; readonly hiddenTextRemoved: boolean }> {
  try {
    const answer = await proxy.pool.request(server, method, params, { signal: extra.signal });
    // a prompt's messages, a resource's text, a completion's values: tag characters and bidi controls out
    const { result, removed } = withoutSmuggledText(answer);
    if (removed !== undefined) {
      proxy.logHiddenText(
        server,
        `\`${method}\` on \`${server}\`: ${removed.characters} hidden characters removed from its answer`,
      );
    }
    return { result, hiddenTextRemoved: removed !== undefined };
  } catch (err) {
    if (err instanceof McpError) throw relayedError(err);
    throw agentError(ErrorCode.InternalError, err instanceof Error ? err.message : String(err));
  }
}
