/**
 * A caller whose `server` is only its word is judged under every reading of it the policy's `classify:`
 * and the consent graph's mapping tell apart — as named, as no server, as each server they name — and the
 * strictest decision stands (ADR 0006): a reading for another server may tighten the decision, and the
 * server named can never loosen it. A named agent held to servers is judged as named.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compilePolicy,
  contractSource,
  createMemoryRateLimiter,
  createPipeline,
  graphSource,
  parseConsentGraph,
  parsePolicy,
  policySource,
  validateGraphMapping,
  type ConsentGraph,
  type GraphMapping,
  type Pipeline,
  type Policy,
  type RateLimiter,
} from "@acp/core";
import {
  anyServerPipelineOf,
  countOncePerCall,
  openEmbeddedServer,
  serverReadings,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  type EmbeddedServerOptions,
  type ServerReadingInputs,
} from "@acp/server";
import { APPROVER_TOKEN, at, openTestServerAt, pipelineFor, readJson, testKeys, type Json } from "./harness.js";

const POLICY = `version: "1"
default_action: ask
rules:
  - id: deny-financial
    match: { category: financial }
    action: deny
  - id: allow-reads
    match: { category: read }
    action: allow
  - id: allow-known
    match: { tool: "{refund_order,void_invoice,export_report}" }
    action: allow
classify:
  - tool: export_report
    server: payments
    category: financial
  - tool: rotate_widget
    server: sandbox
    category: read
`;

const GRAPH = {
  payments: { trust_level: "high", autonomous: ["sandbox_refund"], requires_approval: ["refund"], blocked: [] },
};

const MAPPING = [
  { server: "payments", tool: "refund_order", domain: "payments", action: "refund" },
  { server: "sandbox", tool: "void_invoice", domain: "payments", action: "sandbox_refund" },
  { tool: "void_invoice", domain: "payments", action: "refund" },
];

const ANON = "anonymous-agents-token-0123456789";
const HELD = "held-agent-token-0123456789abcdef";

function policy(): Policy {
  const result = parsePolicy(POLICY, { file: "policy.yml" });
  if (!result.ok) throw new Error(result.issues.map((i) => i.message).join("; "));
  return result.value;
}

function graph(): ConsentGraph {
  const result = parseConsentGraph(JSON.stringify(GRAPH));
  if (!result.ok) throw new Error(result.issues.map((i) => i.message).join("; "));
  return result.value;
}

function mapping(raw: unknown = MAPPING): GraphMapping {
  const result = validateGraphMapping(raw);
  if (!result.ok) throw new Error(result.issues.map((i) => i.message).join("; "));
  return result.value;
}

/** The pipeline `acp serve` builds on one configuration: policy, graph with its mapping, contract. */
function build(inputs: ServerReadingInputs, rateLimiter: RateLimiter, spend: boolean): Pipeline {
  const sources = [
    policySource(compilePolicy(inputs.policy), { rateLimiter, spendRateLimits: spend }),
    graphSource({ graph: graph(), ...(inputs.mapping !== undefined ? { mapping: inputs.mapping } : {}) }),
    contractSource(),
  ];
  return createPipeline(sources, { classify: inputs.policy.classify, annotations: "caller" });
}

const home = mkdtempSync(join(tmpdir(), "acp-server-readings-"));
let node: Awaited<ReturnType<typeof openTestServerAt>>;
beforeAll(async () => {
  const limiter = createMemoryRateLimiter();
  const asItIs = { policy: policy(), mapping: mapping() };
  node = await openTestServerAt(home, {
    pipeline: build(asItIs, limiter, true),
    simulationPipeline: build(asItIs, limiter, false),
    anyServerPipeline: anyServerPipelineOf(policy(), mapping(), (r, spend) => build(r, limiter, spend)),
    anyServerRecheckPipeline: anyServerPipelineOf(policy(), mapping(), (r) => build(r, limiter, false)),
    answerPollMs: 20,
    changePollMs: 50,
    approverToken: APPROVER_TOKEN,
    token: ANON,
    agentTokens: { held: HELD },
    agentServers: { held: ["docs", "sandbox"] },
  });
});
afterAll(async () => {
  await node.node.close();
  rmSync(home, { recursive: true, force: true });
});

async function decide(token: string, body: unknown): Promise<Json> {
  const res = await fetch(`${node.url}/v1/decide`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return readJson(res);
}

function codes(answer: Json): Json[] {
  const reasons = at(answer, "decision", "reasons");
  return Array.isArray(reasons) ? reasons.map((r) => at(r, "code")) : [];
}

describe("the readings of a server that is only the caller's word", () => {
  it("are no server and each server a classify or mapping entry names, each with its entries as they hold", () => {
    const readings = serverReadings(policy(), mapping());
    expect(readings.map((r) => r.server)).toEqual([null, "payments", "sandbox"]);
    const [none, payments, sandbox] = readings;
    // an entry that names a server holds, without its server, under that server's reading only
    expect(none?.policy.classify).toEqual([]);
    expect(none?.mapping).toEqual([{ tool: "void_invoice", domain: "payments", action: "refund" }]);
    expect(payments?.policy.classify).toEqual([{ tool: "export_report", category: "financial" }]);
    expect(payments?.mapping?.map((e) => e.action)).toEqual(["refund", "refund"]);
    expect(sandbox?.policy.classify).toEqual([{ tool: "rotate_widget", category: "read" }]);
    expect(sandbox?.mapping?.map((e) => e.action)).toEqual(["sandbox_refund", "refund"]);
    // every reading is judged on the any-server policy, whose rules here name no server
    expect(payments?.policy.rules).toEqual(policy().rules);
  });

  it("reads a glob as holding for each server name it matches", () => {
    const entries = mapping([
      { server: "pay*", tool: "a", domain: "payments", action: "refund" },
      { server: "payments", tool: "b", domain: "payments", action: "refund" },
    ]);
    const plain = { ...policy(), classify: [] };
    const readings = serverReadings(plain, entries);
    expect(readings.map((r) => [r.server, r.mapping?.map((e) => e.tool)])).toEqual([
      [null, []],
      ["pay*", ["a"]],
      ["payments", ["a", "b"]],
    ]);
    expect(serverReadings(plain, undefined)).toEqual([]);
  });

  it("asks when the call as another server's would be asked, though the server named maps nowhere", async () => {
    const body = { tool: "refund_order", server: "docs", arguments: {} };
    const anon = await decide(ANON, body);
    expect(at(anon, "route")).toBe("ask");
    expect(codes(anon)).toContain("server_unverified");
    expect(at(await decide(HELD, body), "route")).toBe("accept");
  });

  it("refuses when a classify entry for another server makes the call one a deny rule holds", async () => {
    const body = { tool: "export_report", server: "docs", arguments: {} };
    const anon = await decide(ANON, body);
    expect([at(anon, "route"), at(anon, "decision", "rule")]).toEqual(["refuse", "policy:deny-financial"]);
    expect(codes(anon)).toContain("server_unverified");
    expect(at(await decide(HELD, body), "route")).toBe("accept");
  });

  it("does not loosen: a classify entry that makes the named server's call a read does not allow it", async () => {
    const body = { tool: "rotate_widget", server: "sandbox", arguments: {} };
    expect(at(await decide(ANON, body), "route")).toBe("ask");
    expect(at(await decide(HELD, body), "route")).toBe("accept");
  });

  it("does not loosen: a mapping entry that makes the named server's call autonomous does not allow it", async () => {
    const body = { tool: "void_invoice", server: "sandbox", arguments: {} };
    expect(at(await decide(ANON, body), "route")).toBe("ask");
    expect(at(await decide(HELD, body), "route")).toBe("accept");
  });

  it("answers as named, without the reading's reason, when no reading is stricter", async () => {
    const anon = await decide(ANON, { tool: "refund_order", server: "payments", arguments: {} });
    expect(at(anon, "route")).toBe("ask");
    expect(codes(anon)).not.toContain("server_unverified");
    // refused as named too: said as named (a request the HTTP schema lets through reaches no pipeline so)
    const judge = anyServerPipelineOf(policy(), mapping(), (r, spend) => build(r, createMemoryRateLimiter(), spend));
    const invalid = await judge.decide({ tool: "export_report", server: "docs" }, new Date());
    expect([invalid.route, invalid.reasons.map((r) => r.code)]).toEqual(["refuse", ["invalid_request"]]);
  });

  it("spends the rate limit of the rule that allows the call once per call, whatever the readings", async () => {
    const text = `version: "1"
default_action: deny
rules:
  - id: allow-ping
    match: { tool: ping }
    action: allow
    rate_limit: "2/hour"
classify:
  - tool: ping
    server: lab
    category: read
`;
    const parsed = parsePolicy(text, { file: "policy.yml" });
    if (!parsed.ok) throw new Error("policy");
    const limiter = countOncePerCall(createMemoryRateLimiter());
    const judge = anyServerPipelineOf(parsed.value, undefined, (r, spend) => build(r, limiter, spend));
    const routes: string[] = [];
    for (let i = 0; i < 3; i++)
      routes.push((await judge.decide({ tool: "ping", server: "lab", arguments: {} }, new Date())).route);
    expect(routes).toEqual(["accept", "accept", "refuse"]);
  });

  describe("an allow rule's rate limit that only another reading of the server meets", () => {
    // `ping` is a read only on `lab`, and reads are limited: a caller naming `docs` (as named: `pings`, no
    // limit) could otherwise call `lab`'s limited reads without end
    const text = `version: "1"
default_action: deny
rules:
  - id: lab-reads
    match: { category: read }
    action: allow
    rate_limit: "2/hour"
  - id: pings
    match: { tool: ping }
    action: allow
  - id: no-wipes
    match: { tool: wipe }
    action: deny
classify:
  - tool: ping
    server: lab
    category: read
`;
    function judgeOn(limiter: RateLimiter): Pipeline {
      const parsed = parsePolicy(text, { file: "policy.yml" });
      if (!parsed.ok) throw new Error("policy");
      return anyServerPipelineOf(parsed.value, undefined, (r, spend) => build(r, limiter, spend));
    }
    const T = Date.parse("2026-03-02T10:00:00Z");
    const call = (server: string): unknown => ({ tool: "ping", server, arguments: {} });

    it("is counted, and refuses once spent, whichever server the caller names", async () => {
      const judge = judgeOn(countOncePerCall(createMemoryRateLimiter()));
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await judge.decide(call("docs"), new Date(T + i)));
      expect(answers.map((d) => d.route)).toEqual(["accept", "accept", "refuse"]);
      const refused = answers[2];
      expect(refused?.reasons.map((r) => r.code)).toEqual(["rule_matched", "rate_limited", "server_unverified"]);
      expect(refused?.rule).toBe("policy:lab-reads");
      // the answers it lets through are the call as named (its rule, without the reading's reason)
      expect(answers[0]?.rule).toBe("policy:pings");
      expect(answers[0]?.reasons.map((r) => r.code)).not.toContain("server_unverified");
      // one count for every name: `lab`, `docs` and none share the rule's two calls an hour
      const shared = judgeOn(countOncePerCall(createMemoryRateLimiter()));
      const routes: string[] = [];
      for (const server of ["lab", "docs", "", "lab"]) {
        const body = server === "" ? { tool: "ping", arguments: {} } : call(server);
        routes.push((await shared.decide(body, new Date(T))).route);
      }
      expect(routes).toEqual(["accept", "accept", "refuse", "refuse"]);
    });

    it("counts each call once with a limiter that answers later (PostgreSQL), calls in flight together", async () => {
      const memory = createMemoryRateLimiter();
      const later: RateLimiter = {
        consume: (...args) => new Promise((resolve) => setImmediate(() => resolve(memory.consume(...args)))),
      };
      const judge = judgeOn(countOncePerCall(later));
      // as named `lab` and as the reading for `lab`, each call meets `lab-reads` twice: counted once
      const routes = await Promise.all(
        ["lab", "lab", "docs", "lab", "docs"].map(
          async (server) => (await judge.decide(call(server), new Date(T))).route,
        ),
      );
      expect(routes.filter((r) => r === "accept")).toHaveLength(2);
      expect(routes.filter((r) => r === "refuse")).toHaveLength(3);
    });

    it("spends nothing when the call is refused anyway", async () => {
      const limiter = createMemoryRateLimiter();
      const judge = judgeOn(countOncePerCall(limiter));
      for (let i = 0; i < 3; i++)
        expect((await judge.decide({ tool: "wipe", arguments: {} }, new Date(T))).route).toBe("refuse");
      // both of the limit's calls are still there
      expect(limiter.consume("policy:lab-reads", 2, 3_600_000, T).remaining).toBe(1);
    });
  });
});

describe("the console's policy simulator", () => {
  async function simulate(body: unknown): Promise<Json> {
    const { id, session } = await node.node.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
    const res = await fetch(`${node.url}/console/api/simulate`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        cookie: `${SESSION_COOKIE}=${id}`,
        origin: node.url,
        "x-csrf-token": session.csrfToken,
      },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return readJson(res);
  }

  it("answers as /v1/decide answers the agents' token, and an agent held to the server named beside it", async () => {
    const body = { tool: "export_report", server: "docs", arguments: {} };
    const simulated = await simulate(body);
    const decided = await decide(ANON, body);
    expect([at(simulated, "route"), at(simulated, "rule")]).toEqual([
      at(decided, "route"),
      at(decided, "decision", "rule"),
    ]);
    expect(at(simulated, "route")).toBe("refuse");
    expect([at(simulated, "held_to_server", "route"), at(simulated, "held_to_server", "rule")]).toEqual([
      at(await decide(HELD, body), "route"),
      "policy:allow-known",
    ]);
    expect(at(simulated, "held_to_server", "route")).toBe("accept");
  });

  it("shows no agent held to servers for a request naming none (such an agent is refused 403)", async () => {
    const simulated = await simulate({ tool: "rotate_widget", arguments: {} });
    expect([at(simulated, "route"), at(simulated, "held_to_server")]).toEqual(["ask", null]);
  });
});

describe("a library caller of openEmbeddedServer", () => {
  it("cannot open the service without the any-server pipelines: there is no safe default to fall back on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-server-readings-required-"));
    try {
      // what a JavaScript caller written before ADR 0006 passes: every caller's `server` would be trusted
      const options = {
        statePath: join(dir, "state.db"),
        auditPath: join(dir, "audit.jsonl"),
        pipeline: pipelineFor(),
        simulationPipeline: pipelineFor(),
        keys: testKeys(),
        clock: () => new Date(),
        loopbackOnly: true,
      } as unknown as EmbeddedServerOptions;
      await expect(openEmbeddedServer(options)).rejects.toThrow(/^anyServerPipeline is required/);
      const withOne = { ...options, anyServerPipeline: pipelineFor() };
      await expect(openEmbeddedServer(withOne)).rejects.toThrow(/^anyServerRecheckPipeline is required/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
