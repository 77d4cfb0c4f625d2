import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decideByTool, EVERYTHING, fixture, memoryAudit, startInMemory, textOf } from "./harness.js";
import type { ActionRequest, Decision, Reason, SourceVerdict } from "@acp/core";
import { refusalText, type UpstreamSpec } from "../src/index.js";

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

describe("the refusal text", () => {
  it("gives the reasons of the sources that refused, not those that let the call through", () => {
    const reasons: Reason[] = [
      { source: "policy", code: "rule_matched", message: "rule `refuse-system` matched: deny", rule: "refuse-system" },
      { source: "session", code: "session_ok", message: "within the intent and the approved plan" },
      { source: "graph", code: "graph_visible", message: "files.write is VISIBLE at 0.90" },
    ];
    const refused: Decision = {
      route: "refuse",
      action: "deny",
      rule: "policy:refuse-system",
      category: "system",
      risk_level: "high",
      reasons,
      verdicts: [
        { source: "policy", route: "refuse", reasons: [reasons[0] as Reason], rule: "refuse-system" },
        { source: "session", route: "accept", reasons: [reasons[1] as Reason] },
        { source: "graph", route: "accept", reasons: [reasons[2] as Reason] },
      ],
    };
    expect(refusalText(refused)).toBe("refused by policy rule `refuse-system`: rule `refuse-system` matched: deny");
    // two sources refusing: both are named
    const both: Decision = {
      ...refused,
      verdicts: [
        refused.verdicts[0] as SourceVerdict,
        { source: "session", route: "refuse", reasons: [reasons[1] as Reason] },
      ],
    };
    expect(refusalText(both)).toBe(
      "refused by policy rule `refuse-system`: rule `refuse-system` matched: deny; within the intent and the approved plan",
    );
    // refused by the session runtime on its own checks (no rule): it is named, not "policy"
    const bySession: Decision = {
      ...refused,
      rule: null,
      reasons: [
        { source: "session", code: "forbidden", message: "`files.wipe` is not in the intent" },
        reasons[0] as Reason,
      ],
      verdicts: [
        { source: "policy", route: "accept", reasons: [reasons[0] as Reason], rule: "reads" },
        {
          source: "session",
          route: "refuse",
          reasons: [{ source: "session", code: "forbidden", message: "`files.wipe` is not in the intent" }],
        },
      ],
    };
    expect(refusalText(bySession)).toBe("refused by the session: `files.wipe` is not in the intent");
    // an evaluation that failed before any rule decided names no rule called `(error)`
    const failed: Decision = {
      ...refused,
      rule: "policy:(error)",
      reasons: [{ source: "policy", code: "evaluation_error", message: "the policy could not be evaluated" }],
      verdicts: [{ source: "policy", route: "refuse", reasons: [], rule: "(error)" }],
    };
    expect(refusalText(failed)).toBe(
      "refused by the policy, which could not be evaluated: the policy could not be evaluated",
    );
    // a decision without verdicts (a failed decide, a stand-in) keeps every reason
    expect(refusalText({ ...refused, verdicts: [] })).toBe(
      "refused by policy rule `refuse-system`: rule `refuse-system` matched: deny; within the intent and the approved plan; files.write is VISIBLE at 0.90",
    );
  });
});

describe("names that cannot be served", () => {
  it("with prefix_tools: never, a colliding tool of a later server is reported on the log, not dropped in silence", async () => {
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [fixture("one"), fixture("two")],
      prefixTools: "never",
      log: (l) => lines.push(l),
    });
    try {
      const names = (await env.client.listTools()).tools.map((t) => t.name);
      expect(names.filter((n) => n === "echo")).toHaveLength(1);
      expect(lines).toContain(
        "upstream `two`: tool `echo` is not served: `one` offers a tool of the same name (prefix_tools: never)",
      );
      // said once, not at every listing
      await env.client.listTools();
      expect(lines.filter((l) => l.startsWith("upstream `two`: tool `echo` is not served"))).toHaveLength(1);
    } finally {
      await env.close();
    }
  });

  it("a prompt, a resource URI and a resource template another server shadows are reported once, not dropped in silence", async () => {
    const lines: string[] = [];
    const extras = (name: string): UpstreamSpec => {
      const spec = fixture(name);
      if (spec.transport !== "stdio") throw new Error("the fixture is a stdio server");
      return { ...spec, env: { FIXTURE_EXTRAS: "1", FIXTURE_NAME: name } };
    };
    const env = await startInMemory({
      upstreams: [extras("one"), extras("two")],
      prefixTools: "never",
      log: (l) => lines.push(l),
    });
    try {
      const prompts = (await env.client.listPrompts()).prompts.map((p) => p.name);
      expect(prompts).toEqual(["greet"]);
      const resources = (await env.client.listResources()).resources.map((r) => r.uri);
      expect(resources).toEqual(["fixture://readme"]);
      await env.client.listResourceTemplates();
      // served by the first server listed, as the log says
      const read = await env.client.readResource({ uri: "fixture://item/7" });
      expect(read.contents[0]).toMatchObject({ text: "item of one" });
      expect(lines).toEqual(
        expect.arrayContaining([
          "upstream `two`: prompt `greet` is not served: `one` offers a prompt of the same name (prefix_tools: never)",
          'upstream `two`: resource "fixture://readme" is not served: `one` lists the same URI, and reads of it go there',
          'upstream `two`: resource template "fixture://item/{…}" is not served: `one` offers a template with the same start, and reads of such URIs go there',
        ]),
      );
      await env.client.listPrompts();
      await env.client.listResources();
      await env.client.listResourceTemplates();
      expect(lines.filter((l) => /(prompt|resource).* is not served/.test(l))).toHaveLength(3);
    } finally {
      await env.close();
    }
  });
});
