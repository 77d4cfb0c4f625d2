import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, GetPromptResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { createProxy, type AcpProxy, type UpstreamSpec } from "../../src/index.js";
import { connectClient, decideByTool, fixture, rawStdioClient, scriptedBroker } from "../harness.js";

// Every method a session serves answers bad params as a `tools/call` does: -32602 (InvalidParams) with one
// line naming the method and the first problem. Left to the SDK server, its schema failed before any handler
// and the client got -32603 (an internal error) with a dump of every zod issue. The session goes on, and a
// good request of the method is served as before.

let proxy: AcpProxy;

beforeAll(async () => {
  // the fixture with a prompt, resources (subscriptions too), completions and logging
  const spec = fixture();
  if (spec.transport !== "stdio") throw new Error("the fixture is a stdio server");
  const upstream: UpstreamSpec = { ...spec, env: { FIXTURE_EXTRAS: "1" } };
  proxy = createProxy({
    upstreams: [upstream],
    decide: decideByTool({}),
    broker: scriptedBroker(() => ({ kind: "expired" })),
  });
  await proxy.start();
}, 60_000);
afterAll(async () => proxy.close());

const readme = { uri: "fixture://readme" };
const itemIds = { ref: { type: "ref/resource", uri: "fixture://item/{id}" }, argument: { name: "id", value: "1" } };

/** method, bad params (undefined: none), the error's message, good params, what its result holds. */
const cases: [string, unknown, string, Record<string, unknown>, Record<string, unknown>][] = [
  [
    "prompts/get",
    { name: 42 },
    "prompts/get: `name` must be a string (got a number)",
    { name: "greet" },
    { messages: [{ role: "user", content: { type: "text", text: "hello from fixture" } }] },
  ],
  [
    "prompts/get",
    undefined,
    "prompts/get: `params` must be an object with the prompt's `name` (got nothing)",
    { name: "greet" },
    { messages: [{ role: "user", content: { type: "text", text: "hello from fixture" } }] },
  ],
  [
    "prompts/get",
    { name: "greet", arguments: { who: 1 } },
    "prompts/get: `arguments.who` must be a string (got a number)",
    { name: "greet" },
    { messages: [{ role: "user", content: { type: "text", text: "hello from fixture" } }] },
  ],
  [
    "resources/read",
    { uri: null },
    "resources/read: `uri` must be a string (got null)",
    readme,
    { contents: [{ uri: "fixture://readme", text: "readme of fixture" }] },
  ],
  [
    "resources/read",
    {},
    "resources/read: `uri` must be a string (got nothing)",
    readme,
    { contents: [{ uri: "fixture://readme", text: "readme of fixture" }] },
  ],
  ["resources/subscribe", { uri: 7 }, "resources/subscribe: `uri` must be a string (got a number)", readme, {}],
  ["resources/unsubscribe", {}, "resources/unsubscribe: `uri` must be a string (got nothing)", readme, {}],
  [
    "completion/complete",
    { ref: itemIds.ref, argument: { name: "id" } },
    "completion/complete: `argument.value` must be a string (got nothing)",
    itemIds,
    { completion: { values: ["1", "10"] } },
  ],
  [
    "completion/complete",
    { ref: { type: "ref/tool", name: "echo" }, argument: itemIds.argument },
    "completion/complete: `ref.type` must be one of `ref/prompt`, `ref/resource` (got `ref/tool`)",
    itemIds,
    { completion: { values: ["1", "10"] } },
  ],
  [
    "completion/complete",
    { ref: { type: "ref/prompt", name: 3 }, argument: itemIds.argument },
    "completion/complete: `ref.name` must be a string (got a number)",
    itemIds,
    { completion: { values: ["1", "10"] } },
  ],
  [
    "logging/setLevel",
    { level: "loud" },
    "logging/setLevel: `level` must be one of `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency` (got `loud`)",
    { level: "info" },
    {},
  ],
  [
    "prompts/list",
    { cursor: 5 },
    "prompts/list: `cursor` must be a string (got a number)",
    {},
    { prompts: [expect.objectContaining({ name: "greet" })] },
  ],
  [
    "resources/list",
    { cursor: 5 },
    "resources/list: `cursor` must be a string (got a number)",
    {},
    { resources: [expect.objectContaining(readme)] },
  ],
  [
    "resources/templates/list",
    { cursor: false },
    "resources/templates/list: `cursor` must be a string (got a boolean)",
    {},
    { resourceTemplates: [expect.objectContaining({ uriTemplate: "fixture://item/{id}" })] },
  ],
  [
    "tools/list",
    { cursor: {} },
    "tools/list: `cursor` must be a string (got an object)",
    {},
    { tools: expect.arrayContaining([expect.objectContaining({ name: "echo" })]) },
  ],
];

describe("a request with bad params (stdio, raw JSON-RPC)", () => {
  it.each(cases)("%s with params %j: -32602 in a line; a good one after it is served", async (...c) => {
    const [method, bad, message, good, result] = c;
    const client = await rawStdioClient(proxy);
    try {
      await client.initialize();
      client.send({ id: 1, method, ...(bad !== undefined ? { params: bad } : {}) });
      expect((await client.answered(1)).error).toEqual({ code: ErrorCode.InvalidParams, message });
      // the session goes on, and the method is served as before
      client.send({ id: 2, method, params: good });
      const answer = await client.answered(2);
      expect(answer.error).toBeUndefined();
      expect(answer.result).toMatchObject(result);
    } finally {
      client.end();
    }
  });
});

describe("a request with bad params from an SDK client (in memory)", () => {
  it("prompts/get: the SDK client gets an McpError -32602 saying `name` must be a string", async () => {
    const client = await connectClient(proxy);
    try {
      const get = client.request(
        { method: "prompts/get", params: { name: 42 as unknown as string } },
        GetPromptResultSchema,
      );
      await expect(get).rejects.toBeInstanceOf(McpError);
      await expect(get).rejects.toMatchObject({
        code: ErrorCode.InvalidParams,
        message: "MCP error -32602: prompts/get: `name` must be a string (got a number)",
      });
      expect((await client.getPrompt({ name: "greet" })).messages).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});
