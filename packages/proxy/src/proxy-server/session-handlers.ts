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
  type Result,
} from "@modelcontextprotocol/sdk/types.js";
import { gateToolCall } from "../gate/gate-tool-call.js";
import { SUBMIT_PLAN_TOOL } from "./submit-plan.js";
import type { AcpProxy, ProxySession } from "./acp-proxy.js";
import { newId } from "./acp-proxy.js";
import { contextOf, handleToolCall } from "./tool-call-handler.js";

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
  if (caps.prompts) registerPromptHandlers(proxy, server);
  if (caps.resources) registerResourceHandlers(proxy, session);
  if (caps.logging) {
    server.setRequestHandler(SetLevelRequestSchema, async (request, extra) => {
      const withLogging = proxy.pool.connected().filter((u) => u.capabilities?.logging !== undefined);
      await Promise.all(
        withLogging.map((u) =>
          proxy.pool.request(u.spec.name, "logging/setLevel", request.params, { signal: extra.signal }),
        ),
      );
      return {};
    });
  }
  if (caps.completions) {
    server.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
      const ref = request.params.ref;
      if (ref.type === "ref/prompt") {
        const target = (await proxy.catalog.prompts()).resolve(ref.name);
        if (target === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown prompt \`${ref.name}\``);
        const params = { ...request.params, ref: { ...ref, name: target.name } };
        return passThrough(proxy, target.server, "completion/complete", params, extra);
      }
      const owner = await proxy.catalog.serverForUri(ref.uri);
      if (owner === undefined) throw new McpError(ErrorCode.InvalidParams, `no upstream serves \`${ref.uri}\``);
      return passThrough(proxy, owner, "completion/complete", request.params, extra);
    });
  }
}

/**
 * The tools the agent is served. A tool whose description changed since it was pinned (a possible rug
 * pull) keeps its pinned description until a person accepts the new one: text an upstream slipped into a
 * description does not reach the agent's model before a person has seen it.
 */
function listedTools(proxy: AcpProxy): readonly Result[] {
  const index = proxy.catalog.tools();
  return index.exposed.map((tool) => {
    const target = index.resolve(tool.name);
    const change = target === undefined ? undefined : proxy.pinning.changeOf(target.server, target.name);
    if (change === undefined || !change.fields.includes("description")) return tool;
    const { description: _new, ...rest } = tool;
    void _new;
    return change.before.description === null ? rest : { ...rest, description: change.before.description };
  });
}

function registerPromptHandlers(proxy: AcpProxy, server: Server): void {
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [...(await proxy.catalog.prompts()).exposed],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    let target = (await proxy.catalog.prompts()).resolve(request.params.name);
    if (target === undefined) {
      proxy.catalog.invalidate();
      target = (await proxy.catalog.prompts()).resolve(request.params.name);
    }
    if (target === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown prompt \`${request.params.name}\``);
    return passThrough(proxy, target.server, "prompts/get", { ...request.params, name: target.name }, extra);
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
    const owner = await proxy.catalog.serverForUri(uri);
    if (owner === undefined) throw new McpError(-32002, `resource not found: no upstream serves \`${uri}\``);
    await gateResourceRead(proxy, session, owner, uri, extra);
    return passThrough(proxy, owner, "resources/read", request.params, extra);
  });
  registerSubscriptionHandlers(proxy, session);
}

/**
 * `resources/subscribe` and `resources/unsubscribe`, counted across sessions: the upstream is subscribed
 * by the first session and unsubscribed when the last one leaves (or closes).
 */
function registerSubscriptionHandlers(proxy: AcpProxy, session: ProxySession): void {
  const owner = async (uri: string): Promise<string> => {
    const server = await proxy.catalog.serverForUri(uri);
    if (server === undefined) throw new McpError(-32002, `resource not found: no upstream serves \`${uri}\``);
    return server;
  };
  session.server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const server = await owner(uri);
    if (proxy.subscriptions.add(server, uri, session.id)) {
      try {
        await passThrough(proxy, server, "resources/subscribe", request.params, extra);
      } catch (err) {
        proxy.subscriptions.remove(server, uri, session.id);
        throw err;
      }
    }
    return {};
  });
  session.server.setRequestHandler(UnsubscribeRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const server = await owner(uri);
    if (proxy.subscriptions.remove(server, uri, session.id)) {
      await passThrough(proxy, server, "resources/unsubscribe", request.params, extra);
    }
    return {};
  });
}

/** `resources/read` goes through `Decide` as tool `resources/read` with arguments `{uri}`; refusal is a JSON-RPC error. */
async function gateResourceRead(
  proxy: AcpProxy,
  session: ProxySession,
  server: string,
  uri: string,
  extra: Extra,
): Promise<void> {
  const agent = proxy.options.agent ?? session.server.getClientVersion()?.name;
  const verdict = await gateToolCall(proxy.gate, {
    callId: newId("call"),
    server,
    tool: "resources/read",
    arguments: { uri },
    sessionId: session.id,
    ...(agent !== undefined ? { agent } : {}),
    signal: extra.signal,
  });
  if (verdict.kind === "answer") {
    const text = verdict.result.content.map((c) => (c.type === "text" ? c.text : "")).join(" ");
    throw new McpError(ErrorCode.InvalidRequest, text !== "" ? text : "refused");
  }
}

async function passThrough(
  proxy: AcpProxy,
  server: string,
  method: string,
  params: unknown,
  extra: Extra,
): Promise<Result> {
  try {
    return await proxy.pool.request(server, method, params, { signal: extra.signal });
  } catch (err) {
    if (err instanceof McpError) throw err;
    throw new McpError(ErrorCode.InternalError, err instanceof Error ? err.message : String(err));
  }
}
