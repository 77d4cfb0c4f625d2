/**
 * `Retry-After` wherever `acp serve` tells a caller to come back later: a call refused only until a rule's
 * `rate_limit` frees a slot (the answer stays 200 with `route: refuse`, as documented, and the header says
 * in whole seconds when a slot frees), on `/v1/decide` and `/pre-tool-check`; never on a refusal that
 * waiting does not lift (a deny rule, the contract's own refusal), nor on an answer that is no refusal.
 * The caller's share of the policy work (`caller_budget_exhausted`) is in caller-budget.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { retryAtOf, type Decision } from "@acp/core";
import { createMetrics, type EmbeddedServer } from "@acp/server";
import { installErrorHandlers } from "../src/http/error-handler.js";
import { ConsentQueueFullError } from "../src/service/service-errors.js";
import { StreamBudget } from "../src/http/routes/consent-stream.js";
import { at, openTestServerAt, pipelineFor, READ_EVENT, readJson, type Json } from "./harness.js";

const POLICY = `version: "1"
default_action: deny
rules:
  - { id: no-wipe, match: { tool: wipe_disk }, action: deny }
  - { id: pings, match: { tool: ping }, action: allow, rate_limit: "2/minute" }
  - { id: searches, match: { tool: search_docs }, action: allow, rate_limit: "1/hour" }
`;

const TOKEN = "retry-after-agents-token-012345";
const T0 = Date.parse("2026-03-02T10:00:00Z");

describe("Retry-After on a refusal that waiting lifts", () => {
  let home: string;
  let node: EmbeddedServer;
  let url: string;
  let now = T0;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "acp-retry-after-"));
    ({ node, url } = await openTestServerAt(home, {
      pipeline: pipelineFor(POLICY),
      simulationPipeline: pipelineFor(POLICY),
      clock: () => new Date(now),
      token: TOKEN,
    }));
  });
  afterAll(async () => {
    await node.close();
    rmSync(home, { recursive: true, force: true });
  });

  async function post(path: string, body: unknown): Promise<{ status: number; retryAfter: string | null; json: Json }> {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, retryAfter: res.headers.get("retry-after"), json: await readJson(res) };
  }

  it("tells a caller refused by a spent rate limit, on /v1/decide, when a slot frees", async () => {
    const ping = { tool: "ping", arguments: {} };
    const first = await post("/v1/decide", ping);
    expect([first.status, at(first.json, "route"), first.retryAfter]).toEqual([200, "accept", null]);
    now += 15_000;
    expect((await post("/v1/decide", ping)).retryAfter).toBeNull();
    now += 5_000;
    // the limit is spent: the first call frees its slot 60 s after it was counted, 40 s from now
    const refused = await post("/v1/decide", ping);
    expect([refused.status, at(refused.json, "route"), at(refused.json, "decision", "reasons", 1, "code")]).toEqual([
      200,
      "refuse",
      "rate_limited",
    ]);
    expect(refused.retryAfter).toBe("40");
    // and the refusal's message says the same as the header
    expect(at(refused.json, "decision", "reasons", 1, "message")).toBe(
      "rule `pings` is rate limited: limit `2/minute` spent; try again in 40 s",
    );
    now += 39_500;
    expect((await post("/v1/decide", ping)).retryAfter).toBe("1");
    now += 500;
    expect(at((await post("/v1/decide", ping)).json, "route")).toBe("accept");
  });

  it("says nothing when waiting would not change the answer: a deny rule", async () => {
    const denied = await post("/v1/decide", { tool: "wipe_disk", arguments: {} });
    expect([denied.status, at(denied.json, "route"), denied.retryAfter]).toEqual([200, "refuse", null]);
  });

  it("tells it on /pre-tool-check too, unless the contract itself refuses", async () => {
    const first = await post("/pre-tool-check", READ_EVENT);
    expect([first.status, at(first.json, "gate_decision"), first.retryAfter]).toEqual([200, "pass", null]);
    now += 1_000;
    const limited = await post("/pre-tool-check", READ_EVENT);
    expect([limited.status, at(limited.json, "decision", "route"), at(limited.json, "gate_decision")]).toEqual([
      200,
      "refuse",
      "fail",
    ]);
    expect(limited.retryAfter).toBe("3599");
    expect(at(limited.json, "decision", "reasons", 1, "message")).toContain("try again in 3599 s");
    // the same call the contract refuses on its own: no time would make it pass
    const blocked = await post("/pre-tool-check", { ...READ_EVENT, recommended_route: "refuse" });
    expect([at(blocked.json, "architecture_decision", "route"), blocked.retryAfter]).toEqual(["refuse", null]);
  });
});

describe("the time a refusal may be lifted", () => {
  it("is told only when every refusing source refused for a spent limit", async () => {
    const pipeline = pipelineFor(POLICY.replace('"2/minute"', '"1/minute"'));
    const ping = { tool: "ping", arguments: {} };
    expect(retryAtOf(await pipeline.decide(ping, new Date(T0)))).toBeUndefined();
    expect(retryAtOf(await pipeline.decide(ping, new Date(T0 + 1000)))).toBe(T0 + 60_000);
    // a contract event that refuses on its own beside the spent limit: waiting would not lift it
    const withContract = await pipeline.decide(
      { ...ping, contract: { ...READ_EVENT, tool_name: "ping", recommended_route: "refuse" } },
      new Date(T0 + 2000),
    );
    expect(withContract.route).toBe("refuse");
    expect(retryAtOf(withContract)).toBeUndefined();
    const copy: Decision = { ...(await pipeline.decide(ping, new Date(T0 + 3000))), reasons: [] };
    expect(retryAtOf(copy)).toBe(T0 + 60_000);
  });
});

describe("429 consent_queue_full", () => {
  it("says Retry-After: 1 when the request found no turn in time, nothing when the queue is full, 15 for streams", async () => {
    const app = Fastify();
    installErrorHandlers(app, createMetrics(), () => undefined);
    app.get("/busy", () => Promise.reject(new ConsentQueueFullError(null)));
    app.get("/full", () => Promise.reject(new ConsentQueueFullError(10)));
    const none = new StreamBudget(0);
    app.get("/streams", () => {
      none.take();
    });
    try {
      const busy = await app.inject({ method: "GET", url: "/busy" });
      expect([busy.statusCode, busy.headers["retry-after"]]).toEqual([429, "1"]);
      const full = await app.inject({ method: "GET", url: "/full" });
      expect([full.statusCode, full.headers["retry-after"]]).toEqual([429, undefined]);
      // too many open event streams: a hint, one keep-alive interval (when a stream whose client left is found)
      const streams = await app.inject({ method: "GET", url: "/streams" });
      expect([streams.statusCode, streams.headers["retry-after"]]).toEqual([429, "15"]);
      expect(streams.json()).toMatchObject({
        error: { message: expect.stringContaining("try again in 15 s") as string },
      });
    } finally {
      await app.close();
    }
  });
});
