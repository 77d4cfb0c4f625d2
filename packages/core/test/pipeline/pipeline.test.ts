import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  ROUTES,
  assertPolicy,
  composeVerdicts,
  compilePolicy,
  contractSource,
  createMemoryRateLimiter,
  createPipeline,
  graphSource,
  parseConsentGraph,
  policySource,
  routeStrictness,
  type Decision,
  type DecisionSource,
  type Route,
  type SourceVerdict,
} from "../../src/index.js";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const NOW = new Date("2026-03-02T10:00:00Z");

const POLICY = assertPolicy(`
version: "1"
default_action: ask
rules:
  - id: no-money
    match: { category: financial }
    action: deny
  - id: reads
    match: { category: read }
    action: allow
  - id: mail
    match: { tool: send_email }
    action: allow
    rate_limit: "2/minute"
`);

const graphText = readFileSync(
  fileURLToPath(new URL("../../../../spec/examples/consent-graph.json", import.meta.url)),
  "utf8",
);
const graphResult = parseConsentGraph(graphText);
if (!graphResult.ok) throw new Error("example graph must load");
const GRAPH = graphResult.value;

function fixed(route: Route, name: DecisionSource["name"] = "session"): DecisionSource {
  return {
    name,
    evaluate: () => ({ source: name, route, reasons: [{ source: name, code: "fixed", message: `says ${route}` }] }),
  };
}

describe("the one pipeline", () => {
  it("accepts what the policy allows and names the deciding rule", async () => {
    const pipeline = createPipeline([policySource(compilePolicy(POLICY))]);
    const decision = await pipeline.decide({ tool: "read_file", arguments: { path: "/tmp/a" } }, NOW);
    expect(decision).toMatchObject({ route: "accept", action: "allow", rule: "policy:reads", category: "read" });
  });

  it("lets the strictest source win and keeps every source's reasons", async () => {
    const pipeline = createPipeline([policySource(POLICY), graphSource({ graph: GRAPH })]);
    const decision = await pipeline.decide(
      {
        tool: "read_file",
        arguments: {},
        graph: { domain: "self_modification", action: "modify_soul_md", confidence: 0.99 },
      },
      NOW,
    );
    expect(decision.route).toBe("refuse");
    expect(decision.rule?.startsWith("graph:")).toBe(true);
    expect(decision.reasons.map((r) => r.source)).toEqual(expect.arrayContaining(["graph", "policy"]));
    expect(decision.reasons[0]?.source).toBe("graph");
  });

  it("refuses when a source throws, with the error as the reason", async () => {
    const broken: DecisionSource = {
      name: "graph",
      evaluate: () => {
        throw new Error("disk on fire");
      },
    };
    const decision = await createPipeline([fixed("accept"), broken]).decide({ tool: "x", arguments: {} }, NOW);
    expect(decision.route).toBe("refuse");
    expect(decision.reasons.some((r) => r.code === "source_error" && r.message.includes("disk on fire"))).toBe(true);
  });

  it("refuses when a source answers something that is no verdict, even beside an accept", async () => {
    // a custom source speaking the rule vocabulary (`deny`), forgetting to return, or answering junk
    const answers: unknown[] = [
      { source: "graph", route: "deny", reasons: [] },
      { source: "graph", route: "ACCEPT", reasons: [] },
      { source: "graph", reasons: [] },
      undefined,
      5,
      "refuse",
    ];
    // each answer from a graph source beside one that accepts, given at once and through a promise
    const besideAccept = async (answer: unknown): Promise<Decision[]> => {
      const decisions: Decision[] = [];
      for (const async of [false, true]) {
        const odd = { name: "graph", evaluate: () => (async ? Promise.resolve(answer) : answer) };
        const pipeline = createPipeline([fixed("accept"), odd as unknown as DecisionSource]);
        decisions.push(await pipeline.decide({ tool: "x", arguments: {} }, NOW));
      }
      return decisions;
    };
    for (const answer of answers) {
      for (const decision of await besideAccept(answer)) {
        expect([answer, decision.route]).toEqual([answer, "refuse"]);
        expect(decision.reasons.some((r) => r.code === "source_error" && r.source === "graph")).toBe(true);
      }
    }
    const unreadable = new Proxy(
      {},
      {
        get: () => {
          throw new Error("no route here");
        },
      },
    );
    for (const decision of await besideAccept(unreadable)) {
      expect(decision.route).toBe("refuse");
      expect(decision.reasons.some((r) => r.code === "source_error" && r.message.includes("no route here"))).toBe(true);
    }
    // a verdict that reads as accept until its reasons are read: the decision refuses, it does not reject
    const treacherous = {
      source: "graph",
      route: "accept",
      get reasons(): never {
        throw new Error("no reasons here");
      },
    };
    for (const decision of await besideAccept(treacherous)) {
      expect(decision).toMatchObject({ route: "refuse", reasons: [{ code: "pipeline_error" }] });
      expect(decision.reasons[0]?.message).toContain("no reasons here");
    }
    const alone = { name: "graph", evaluate: () => ({ source: "graph", route: "allow", reasons: [] }) };
    const decision = await createPipeline([alone as unknown as DecisionSource]).decide(
      { tool: "x", arguments: {} },
      NOW,
    );
    expect(decision).toMatchObject({ route: "refuse", action: "deny" });
    expect(decision.reasons[0]?.message).toContain("`allow`");
  });

  it("refuses a malformed request without asking any source", async () => {
    let asked = false;
    const spy: DecisionSource = { name: "policy", evaluate: () => ((asked = true), null) };
    const pipeline = createPipeline([spy]);
    for (const bad of [
      null,
      42,
      "tool",
      { tool: "", arguments: {} },
      { tool: "x" },
      { tool: "x", arguments: [] },
      { tool: "x", arguments: {}, extra: 1 },
    ]) {
      const decision = await pipeline.decide(bad, NOW);
      expect(decision.route).toBe("refuse");
      expect(decision.reasons[0]?.code).toBe("invalid_request");
    }
    expect(asked).toBe(false);
  });

  it("refuses a lone surrogate in a name, an argument or an argument's name (not I-JSON: no proof could hold it)", async () => {
    const pipeline = createPipeline([fixed("accept")]);
    for (const [request, message] of [
      [{ tool: "send\ud800", arguments: {} }, "`tool` holds a lone surrogate"],
      [{ tool: "x", agent: "\udc00", arguments: {} }, "`agent` holds a lone surrogate"],
      [{ tool: "x", arguments: { to: ["ok", "bad \ud800 x"] } }, "an argument string holds a lone surrogate"],
      [{ tool: "x", arguments: { nested: { ["k\udfff"]: 1 } } }, "an argument name holds a lone surrogate"],
    ] as const) {
      const decision = await pipeline.decide(request, NOW);
      expect(decision.route).toBe("refuse");
      expect(decision.reasons[0]?.code).toBe("invalid_request");
      expect(decision.reasons[0]?.message).toContain(message);
    }
    // a surrogate pair is a character like any other
    expect((await pipeline.decide({ tool: "x", arguments: { text: "\ud83d\ude00" } }, NOW)).route).toBe("accept");
  });

  it("refuses a name with an invisible or control character, or a space at an end: no rule for the name shown matches it", async () => {
    // under `default_action: allow` a deny rule for `delete_database` missed `delete\u200b_database`
    const policy = assertPolicy(`
version: "1"
default_action: allow
rules:
  - id: no-drop
    match: { tool: delete_database }
    action: deny
`);
    const pipeline = createPipeline([policySource(policy)]);
    const hidden = [
      "delete\u200b_database", // zero-width space
      "delete_database\u202e", // right-to-left override
      "delete_\u2066database\u2069", // bidi isolate
      "delete_database\u00ad", // soft hyphen
      "\ufeffdelete_database", // byte-order mark
      "delete_database\u{e0041}", // Unicode tag (invisible ASCII)
      "delete_database\ufe0f", // variation selector
      "delete_database\n",
      "delete_database ",
      "delete\u00a0database",
      "delete\u2800_database", // blank Braille pattern: not white space to Unicode, blank on screen
      "\u2800delete_database",
      "delete\u17b4_database", // Khmer inherent vowel (a mark that shows nothing)
      "delete\u{1d159}_database", // musical null notehead
    ];
    for (const tool of hidden) {
      const decision = await pipeline.decide({ tool, arguments: {} }, NOW);
      expect([tool, decision.route]).toEqual([tool, "refuse"]);
      expect(decision.reasons[0]?.code).toBe("invalid_request");
    }
    const agent = await pipeline.decide({ tool: "x", agent: "ops\u200d", arguments: {} }, NOW);
    expect(agent.reasons[0]?.message).toContain("`agent` holds an invisible or control character (U+200D)");
    // names in other scripts, and spaces inside, are names
    for (const tool of ["envoyer_le_courriel_à", "写邮件", "send email", "a/b.c-d"]) {
      expect((await pipeline.decide({ tool, arguments: {} }, NOW)).route).toBe("accept");
    }
  });

  it("refuses arguments nested 10,000 deep without overflowing the stack", async () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    const decision = await createPipeline([fixed("accept")]).decide({ tool: "x", arguments: { deep } }, NOW);
    expect(decision.route).toBe("refuse");
    expect(decision.reasons[0]?.message).toContain("nest deeper");
  });

  it("refuses when no source judges the request", async () => {
    const decision = await createPipeline([contractSource()]).decide({ tool: "x", arguments: {} }, NOW);
    expect(decision.route).toBe("refuse");
    expect(decision.reasons[0]?.code).toBe("no_source");
  });

  it("refuses on an invalid clock", async () => {
    const decision = await createPipeline([fixed("accept")]).decide({ tool: "x", arguments: {} }, new Date(Number.NaN));
    expect(decision.route).toBe("refuse");
  });

  it("refuses when the rule's rate limit is spent", async () => {
    const pipeline = createPipeline([policySource(POLICY, { rateLimiter: createMemoryRateLimiter() })]);
    const call = { tool: "send_email", arguments: { to: "a@example.com" } };
    expect((await pipeline.decide(call, NOW)).route).toBe("accept");
    expect((await pipeline.decide(call, NOW)).route).toBe("accept");
    const third = await pipeline.decide(call, NOW);
    expect(third.route).toBe("refuse");
    expect(third.reasons.some((r) => r.code === "rate_limited")).toBe(true);
  });

  it("does not spend a rule's rate limit on a call another source refuses", async () => {
    // a session source that refuses what untrusted text asked for (here: mail to the attacker)
    const session: DecisionSource = {
      name: "session",
      evaluate: (request) => {
        const refused = (request.arguments as { to?: string }).to === "mark@attacker.example";
        const route: Route = refused ? "refuse" : "accept";
        return { source: "session", route, reasons: [{ source: "session", code: "fixed", message: route }] };
      },
    };
    const pipeline = createPipeline([policySource(POLICY, { rateLimiter: createMemoryRateLimiter() }), session]);
    const injected = { tool: "send_email", arguments: { to: "mark@attacker.example" } };
    for (let i = 0; i < 5; i++) {
      const refused = await pipeline.decide(injected, NOW);
      expect(refused.route).toBe("refuse");
      expect(refused.reasons.some((r) => r.code === "rate_limited")).toBe(false);
      // the verdicts keep the order of the sources, the policy's first
      expect(refused.verdicts.map((v) => v.source)).toEqual(["policy", "session"]);
    }
    // the user's own two mails a minute are still there, and the third is still limited
    const mine = { tool: "send_email", arguments: { to: "a@example.com" } };
    expect((await pipeline.decide(mine, NOW)).route).toBe("accept");
    expect((await pipeline.decide(mine, NOW)).route).toBe("accept");
    const third = await pipeline.decide(mine, NOW);
    expect(third.route).toBe("refuse");
    expect(third.reasons.some((r) => r.code === "rate_limited")).toBe(true);
  });

  it("judges an action-contract event as a third source", async () => {
    const pipeline = createPipeline([policySource(POLICY), contractSource()]);
    const contract = {
      tool_name: "send_email",
      tool_category: "write",
      authorization_state: "user_claimed",
      evidence_refs: ["draft_id:123"],
      risk_domain: "customer_support",
      proposed_arguments: { to: "customer@example.com" },
      recommended_route: "accept",
    };
    const decision = await pipeline.decide({ tool: "send_email", arguments: { to: "x@example.com" }, contract }, NOW);
    expect(decision.route).toBe("ask");
    expect(decision.rule?.startsWith("contract")).toBe(true);
  });

  it("refuses a contract event about another tool than the request, however the event itself reads", async () => {
    const pipeline = createPipeline([policySource(POLICY), contractSource()]);
    // the policy reads `read_file` (allowed); the event, about a public read, would accept `delete_database`
    const contract = {
      tool_name: "delete_database",
      tool_category: "public_read",
      authorization_state: "none",
      evidence_refs: [],
      risk_domain: "research",
      proposed_arguments: { path: "/tmp/a" },
      recommended_route: "accept",
    };
    const mismatched = await pipeline.decide({ tool: "read_file", arguments: { path: "/tmp/a" }, contract }, NOW);
    expect(mismatched.route).toBe("refuse");
    expect(mismatched.reasons[0]).toMatchObject({ source: "contract", code: "contract_tool_mismatch" });
    const same = { ...contract, tool_name: "read_file" };
    const matched = await pipeline.decide({ tool: "read_file", arguments: { path: "/tmp/a" }, contract: same }, NOW);
    expect(matched.route).toBe("accept");
  });

  it("decides the same whether sources answer synchronously, with a promise or with a thenable (property)", async () => {
    type Answer = "verdict" | "null" | "throw";
    type Kind = "sync" | "promise" | "thenable";
    const spec = fc.record({
      route: fc.constantFrom(...ROUTES),
      answer: fc.constantFrom<Answer>("verdict", "verdict", "null", "throw"),
      last: fc.boolean(),
      kind: fc.constantFrom<Kind>("sync", "promise", "thenable"),
    });
    const names: DecisionSource["name"][] = ["session", "graph", "contract", "policy"];
    function build(specs: { route: Route; answer: Answer; last: boolean; kind: Kind }[], sync: boolean) {
      const asked: string[] = [];
      const sources = specs.map((s, i): DecisionSource => {
        const name = names[i % names.length] as DecisionSource["name"];
        const judge = (earlier?: readonly unknown[]) => {
          asked.push(`${i}:${earlier === undefined ? "-" : earlier.length}`);
          if (s.answer === "throw") throw new Error(`source ${i} broke`);
          if (s.answer === "null") return null;
          return { source: name, route: s.route, reasons: [{ source: name, code: `c${i}`, message: s.route }] };
        };
        const evaluate: DecisionSource["evaluate"] = (_request, _now, earlier) => {
          if (sync || s.kind === "sync") return judge(earlier);
          if (s.kind === "promise") return new Promise((resolve) => setImmediate(resolve)).then(() => judge(earlier));
          const thenable = {
            then: (ok: (v: unknown) => void, bad: (e: unknown) => void) => {
              try {
                ok(judge(earlier));
              } catch (err) {
                bad(err);
              }
            },
          };
          return thenable as unknown as Promise<null>;
        };
        return { name, evaluate, ...(s.last ? { last: true } : {}) };
      });
      return { pipeline: createPipeline(sources), asked };
    }
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { maxLength: 5 }), async (specs) => {
        const plain = build(specs, true);
        const mixed = build(specs, false);
        const request = { tool: "t", arguments: {} };
        const expected = await plain.pipeline.decide(request, NOW);
        expect(await mixed.pipeline.decide(request, NOW)).toStrictEqual(expected);
        // the same sources asked in the same order, the later ones handed the same earlier verdicts
        expect(mixed.asked).toEqual(plain.asked);
        const failing = specs.some((s) => s.answer === "throw");
        if (failing) expect(expected.route).toBe("refuse");
      }),
      { numRuns: 300 },
    );
  });

  it("asks every synchronous source before decide returns, and a rejecting source refuses", async () => {
    let asked = 0;
    const counting = (route: Route): DecisionSource => ({
      name: "session",
      evaluate: () => {
        asked++;
        return { source: "session", route, reasons: [{ source: "session", code: "fixed", message: route }] };
      },
    });
    const answer = createPipeline([counting("accept"), { ...counting("accept"), last: true }]).decide(
      { tool: "x", arguments: {} },
      NOW,
    );
    expect(asked).toBe(2);
    expect((await answer).route).toBe("accept");
    const rejecting: DecisionSource = { name: "graph", evaluate: () => Promise.reject(new Error("lost the graph")) };
    const refused = await createPipeline([counting("accept"), rejecting]).decide({ tool: "x", arguments: {} }, NOW);
    expect(refused.route).toBe("refuse");
    expect(refused.verdicts.map((v) => v.source)).toEqual(["session", "graph"]);
    expect(refused.reasons.some((r) => r.code === "source_error" && r.message.includes("lost the graph"))).toBe(true);
  });

  it("composes verdicts as a stable sort by strictness would (property)", () => {
    const reference = (verdicts: readonly SourceVerdict[]) => {
      let deciding = verdicts[0] as SourceVerdict;
      for (const v of verdicts) if (routeStrictness(v.route) > routeStrictness(deciding.route)) deciding = v;
      const ordered = [...verdicts].sort((a, b) => routeStrictness(b.route) - routeStrictness(a.route));
      return { route: deciding.route, deciding, reasons: ordered.flatMap((v) => v.reasons) };
    };
    const verdict = fc.record({
      source: fc.constantFrom<SourceVerdict["source"]>("policy", "graph", "contract", "session"),
      // an unknown route (a source's mistake) ranks below accept
      route: fc.constantFrom<Route>(...ROUTES, "bogus" as Route),
      reasons: fc.array(
        fc.record({ source: fc.constant("session" as const), code: fc.string(), message: fc.string() }),
        {
          maxLength: 3,
        },
      ),
    });
    fc.assert(
      fc.property(fc.array(verdict, { minLength: 1, maxLength: 6 }), (verdicts) => {
        const composed = composeVerdicts(verdicts);
        const expected = reference(verdicts);
        expect(composed.route).toBe(expected.route);
        expect(composed.deciding).toBe(expected.deciding);
        expect(composed.reasons).toEqual(expected.reasons);
        composed.reasons.forEach((r, i) => expect(r).toBe(expected.reasons[i]));
      }),
      { numRuns: 1000 },
    );
  });

  it("is never more permissive than its strictest source (property)", async () => {
    const route = fc.constantFrom(...ROUTES);
    await fc.assert(
      fc.asyncProperty(fc.array(route, { minLength: 1, maxLength: 5 }), async (routes) => {
        const decision = await createPipeline(routes.map((r) => fixed(r))).decide({ tool: "t", arguments: {} }, NOW);
        const strictest = Math.max(...routes.map(routeStrictness));
        expect(routeStrictness(decision.route)).toBe(strictest);
        expect(decision.reasons).toHaveLength(routes.length);
      }),
    );
  });

  it("never throws and never accepts a request that fails validation (property)", async () => {
    const pipeline = createPipeline([fixed("accept")]);
    await fc.assert(
      fc.asyncProperty(fc.anything(), async (input) => {
        const decision = await pipeline.decide(input, NOW);
        if (decision.route === "accept") {
          expect(typeof (input as { tool?: unknown }).tool).toBe("string");
        }
      }),
    );
  });
});
