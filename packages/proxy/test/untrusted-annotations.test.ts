import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertPolicy,
  createPipeline,
  policySource,
  type ActionRequest,
  type ClassificationOverride,
  type Decision,
} from "@acp/core";
import { STARTER_POLICY } from "@acp/store";
import type { ConsentAsk, Decide, UpstreamSpec } from "../src/index.js";
import {
  annotationsToDecideWith,
  readOnlyClaimsSetAside,
  readOnlySetAsideMessage,
} from "../src/proxy-server/server-annotations.js";
import { scriptedBroker, startInMemory, textOf } from "./harness.js";

// MCP: "clients MUST consider tool annotations to be untrusted unless they come from trusted servers". A
// server not marked `trusted: true` may tighten how its tools are judged (destructiveHint) but cannot make
// an unknown tool a read by saying it is read-only; a server marked trusted can.

const SERVER = fileURLToPath(new URL("./fixtures/pinning-server.mjs", import.meta.url));
const TOOLS = [
  { name: "lookup", inputSchema: { type: "object" }, annotations: { readOnlyHint: true, destructiveHint: false } },
  { name: "wipe", inputSchema: { type: "object" }, annotations: { readOnlyHint: true, destructiveHint: true } },
  { name: "read_notes", inputSchema: { type: "object" }, annotations: { destructiveHint: true } },
  { name: "list_notes", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
];

function upstream(name: string, trusted: boolean): UpstreamSpec {
  return {
    name,
    transport: "stdio",
    command: process.execPath,
    args: [SERVER],
    env: { FIXTURE_TOOLS: JSON.stringify(TOOLS) },
    ...(trusted ? { trusted: true } : {}),
  };
}

describe("annotations of an upstream not marked trusted", () => {
  const seen: ActionRequest[] = [];
  const decisions: Decision[] = [];
  const asks: ConsentAsk[] = [];
  const log: string[] = [];
  const pipeline = createPipeline([policySource(assertPolicy(STARTER_POLICY))]);
  const decide: Decide = async (request) => {
    seen.push(request);
    const decided = await pipeline.decide(request, new Date());
    decisions.push(decided);
    return decided;
  };
  let started: Awaited<ReturnType<typeof startInMemory>>;

  beforeAll(async () => {
    started = await startInMemory({
      upstreams: [upstream("stranger", false), upstream("vouched", true)],
      prefixTools: "always",
      decide,
      broker: scriptedBroker((ask) => {
        asks.push(ask);
        return { kind: "denied", reason: "no", consentResponse: { decision: "denied" } };
      }),
      log: (line) => log.push(line),
    });
  });
  afterAll(async () => {
    await started.close();
  });

  async function call(name: string): Promise<{ text: string; request: ActionRequest; decision: Decision }> {
    const before = seen.length;
    const result = await started.client.callTool({ name, arguments: {} });
    expect(seen.length).toBe(before + 1);
    return { text: textOf(result), request: seen.at(-1) as ActionRequest, decision: decisions.at(-1) as Decision };
  }

  it("does not make an unknown tool a read by saying it is read-only: it asks as a write", async () => {
    const asked = asks.length;
    const { text, request, decision } = await call("stranger__lookup");
    expect(request.annotations).toEqual({ destructiveHint: false });
    expect(decision).toMatchObject({ route: "ask", rule: "policy:ask-writes", category: "write" });
    expect(asks.length).toBe(asked + 1);
    expect(text).not.toContain("called lookup");
  });

  it("takes the same tool as a read from a server marked trusted", async () => {
    const asked = asks.length;
    const { text, request, decision } = await call("vouched__lookup");
    expect(request.annotations).toEqual({ readOnlyHint: true, destructiveHint: false });
    expect(decision).toMatchObject({ route: "accept", rule: "policy:allow-reads", category: "read" });
    expect(asks.length).toBe(asked);
    expect(text).toBe("called lookup");
  });

  it("still lets the untrusted server's destructiveHint tighten", async () => {
    const wipe = await call("stranger__wipe");
    expect(wipe.request.annotations).toEqual({ destructiveHint: true });
    expect(wipe.decision).toMatchObject({ route: "ask", category: "write", risk_level: "high" });
    const notes = await call("stranger__read_notes");
    expect(notes.decision).toMatchObject({ route: "ask", category: "write", risk_level: "high" });
    // from the trusted server, read-only and destructive together: the read-only mark is taken
    const vouched = await call("vouched__wipe");
    expect(vouched.decision).toMatchObject({ route: "accept", category: "read" });
  });

  it("leaves a name the table already reads as a read", async () => {
    const { text, decision } = await call("stranger__list_notes");
    expect(decision).toMatchObject({ route: "accept", rule: "policy:allow-reads", category: "read" });
    expect(text).toBe("called list_notes");
  });

  it("says at start which tools' read-only mark is set aside, and how to change it", () => {
    const said = log.filter((line) => line.includes("read-only"));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("upstream `stranger`: 2 tools mark themselves read-only (`lookup`, `wipe`)");
    expect(said[0]).toContain("`trusted: true`");
    expect(said[0]).not.toContain("list_notes");
  });
});

// the policy's `classify:` names `lookup` on `stranger` a read: its calls are reads without the hint
const CLASSIFYING_POLICY = `${STARTER_POLICY}  - { tool: lookup, server: stranger, category: read }\n`;

describe("the start's line with a policy whose classify: makes a tool a read", () => {
  const log: string[] = [];
  const decisions: Decision[] = [];
  const policy = assertPolicy(CLASSIFYING_POLICY);
  const pipeline = createPipeline([policySource(policy)], { classify: policy.classify });
  let started: Awaited<ReturnType<typeof startInMemory>>;

  beforeAll(async () => {
    started = await startInMemory({
      upstreams: [upstream("stranger", false)],
      prefixTools: "always",
      decide: async (request) => {
        const decided = await pipeline.decide(request, new Date());
        decisions.push(decided);
        return decided;
      },
      classify: () => policy.classify,
      broker: scriptedBroker(() => ({ kind: "denied", reason: "no", consentResponse: { decision: "denied" } })),
      log: (line) => log.push(line),
    });
  });
  afterAll(async () => {
    await started.close();
  });

  it("leaves out the tool classify: makes a read, and names the others", () => {
    const said = log.filter((line) => line.includes("read-only"));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("upstream `stranger`: 1 tool marks itself read-only (`wipe`)");
    expect(said[0]).not.toContain("lookup");
  });

  it("says what the decision does: the call to that tool is accepted as a read, its hint still set aside", async () => {
    const result = await started.client.callTool({ name: "stranger__lookup", arguments: {} });
    expect(textOf(result)).toBe("called lookup");
    expect(decisions.at(-1)).toMatchObject({ route: "accept", rule: "policy:allow-reads", category: "read" });
  });
});

describe("readOnlyClaimsSetAside with the policy's classify:", () => {
  const tools = [
    { name: "echo", annotations: { readOnlyHint: true } },
    { name: "peek", annotations: { readOnlyHint: true } },
    { name: "zap", annotations: { readOnlyHint: true, destructiveHint: true } },
  ];

  it("lists a tool only when its calls are not reads without the hint", () => {
    expect(readOnlyClaimsSetAside("s", tools)).toEqual(["echo", "peek", "zap"]);
    expect(readOnlyClaimsSetAside("s", tools, [{ tool: "echo", category: "read" }])).toEqual(["peek", "zap"]);
    // the policy's classify: outranks annotations (destructiveHint too): every call is a read, nothing to say
    expect(readOnlyClaimsSetAside("s", tools, [{ tool: "*", category: "read" }])).toEqual([]);
  });

  it("keeps a tool that classify: makes a read on another server only", () => {
    const elsewhere: ClassificationOverride[] = [{ tool: "echo", server: "other", category: "read" }];
    expect(readOnlyClaimsSetAside("s", tools, elsewhere)).toEqual(["echo", "peek", "zap"]);
    expect(readOnlyClaimsSetAside("other", tools, elsewhere)).toEqual(["peek", "zap"]);
  });
});

describe("annotationsToDecideWith", () => {
  it("keeps only the boolean hints, and readOnlyHint only from a trusted server", () => {
    const given = { readOnlyHint: true, openWorldHint: false, title: "Lookup", destructiveHint: "yes" };
    expect(annotationsToDecideWith(given, true)).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(annotationsToDecideWith(given, false)).toEqual({ openWorldHint: false });
    expect(annotationsToDecideWith({ readOnlyHint: true }, false)).toBeUndefined();
    expect(annotationsToDecideWith({ readOnlyHint: false }, false)).toEqual({ readOnlyHint: false });
    for (const odd of [undefined, null, "readOnly", 7, []]) expect(annotationsToDecideWith(odd, true)).toBeUndefined();
  });

  it("lists the set-aside claims only where they would change something", () => {
    expect(
      readOnlyClaimsSetAside("s", [
        { name: "echo", annotations: { readOnlyHint: true } },
        { name: "get_sum", annotations: { readOnlyHint: true } },
        { name: "send", annotations: { readOnlyHint: false } },
        { name: "bare" },
        { name: "odd", annotations: "readOnlyHint" },
      ]),
    ).toEqual(["echo"]);
  });

  it("says the set-aside claims in one line: the first five tools by name, how many more, and the way out", () => {
    const claiming = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `tool_${i}`, annotations: { readOnlyHint: true } }));
    expect(readOnlySetAsideMessage("files", [{ name: "list_files", annotations: { readOnlyHint: true } }])).toBeNull();
    const one = readOnlySetAsideMessage("files", claiming(1));
    expect(one).toContain("upstream `files`: 1 tool marks itself read-only (`tool_0`);");
    const seven = readOnlySetAsideMessage("files", claiming(7)) ?? "";
    expect(seven).toContain(
      "7 tools mark themselves read-only (`tool_0`, `tool_1`, `tool_2`, `tool_3`, `tool_4`, and 2 more)",
    );
    expect(seven).not.toContain("tool_5");
    expect(seven).toMatch(/mark the server `trusted: true` in config\.yml .* --trust files, .* `classify:`$/);
    expect(seven).not.toContain("\n");
  });
});
