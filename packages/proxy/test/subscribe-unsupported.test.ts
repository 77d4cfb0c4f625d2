import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamSpec } from "../src/index.js";
import { EVERYTHING, startInMemory } from "./harness.js";

// The proxy offers `resources/subscribe` when any upstream supports it. A resource of an upstream that does not
// (its capabilities name no `subscribe`) is refused at once with -32601 naming the server. It used to be passed
// on: a server that answers any method with `{}` (this fixture) left the agent subscribed to updates that never
// come, one that ignores it held the request until its timeout.

const NO_SUBSCRIBE: UpstreamSpec = {
  name: "notes",
  transport: "stdio",
  command: process.execPath,
  args: [fileURLToPath(new URL("./fixtures/smuggling-server.mjs", import.meta.url))],
};

describe("resources/subscribe to a resource whose server does not support subscribing", () => {
  let started: Awaited<ReturnType<typeof startInMemory>>;
  beforeAll(async () => {
    started = await startInMemory({ upstreams: [EVERYTHING, NO_SUBSCRIBE] });
  }, 60_000);
  afterAll(async () => {
    await started.close();
  });

  it("is offered, since one server supports it", () => {
    expect(started.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
  });

  it("is -32601 at once, naming the server, and nothing is counted", async () => {
    const failed = await started.client.subscribeResource({ uri: "notes://note" }, { timeout: 5_000 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(McpError);
    expect((failed as McpError).code).toBe(-32601);
    expect((failed as McpError).message).toContain("upstream `notes`, which serves `notes://note`, does not support");
    expect(started.proxy.subscriptions.subscribers("notes", "notes://note")).toEqual([]);
    // unsubscribing what was never subscribed is no error
    await started.client.unsubscribeResource({ uri: "notes://note" }, { timeout: 5_000 });
  });

  it("still subscribes to a resource of the server that supports it", async () => {
    const listed = await started.client.listResources();
    const uri = listed.resources.find((r) => !r.uri.startsWith("notes://"))?.uri;
    expect(uri).toBeDefined();
    await started.client.subscribeResource({ uri: uri as string }, { timeout: 10_000 });
    expect(started.proxy.subscriptions.subscribers("everything", uri as string)).toHaveLength(1);
  });
});
