import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decideByTool, EVERYTHING, fixture, memoryAudit, startInMemory, textOf } from "./harness.js";
import type { ActionRequest } from "@acp/core";

describe("proxy over real upstreams (in-memory client)", () => {
  const seen: ActionRequest[] = [];
  const audit = memoryAudit();
  let env: Awaited<ReturnType<typeof startInMemory>>;
  beforeAll(async () => {
    env = await startInMemory({
      upstreams: [EVERYTHING, fixture()],
      decide: decideByTool({ "get-sum": "refuse", transfer: "refuse" }, seen),
      audit,
    });
  });
  afterAll(async () => env.close());

  it("lists the union of upstream tools with annotations kept, colliding names prefixed", async () => {
    const { tools } = await env.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain("get-sum");
    expect(names).toContain("transfer");
    // both servers offer `echo`: each is prefixed with its server name
    expect(names).toContain("everything__echo");
    expect(names).toContain("fixture__echo");
    expect(names).not.toContain("echo");
    const transfer = tools.find((t) => t.name === "transfer");
    expect(transfer?.annotations?.destructiveHint).toBe(true);
  });

  it("forwards an accepted call and returns the upstream result unchanged", async () => {
    const result = await env.client.callTool({ name: "everything__echo", arguments: { message: "hi" } });
    expect(textOf(result)).toContain("hi");
    expect(result.isError).not.toBe(true);
    const request = seen.at(-1);
    expect(request?.tool).toBe("echo");
    expect(request?.server).toBe("everything");
    const types = audit.events.filter((e) => e.fields["tool"] === "echo").map((e) => e.type);
    expect(types).toEqual(["tool_call_intercepted", "policy_evaluated", "tool_call_forwarded", "tool_call_completed"]);
  });

  it("refuses with a readable tool error naming the rule and its reasons", async () => {
    const result = await env.client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("refused by policy rule `refuse-get-sum`: rule `refuse-get-sum` matched");
  });

  it("passes the upstream annotations to the decision", async () => {
    await env.client.callTool({ name: "transfer", arguments: { amount: 5 } });
    expect(seen.at(-1)?.annotations).toEqual({ destructiveHint: true });
  });
});
