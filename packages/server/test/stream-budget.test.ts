/**
 * Event streams are bounded in two budgets: the API's (`/v1/consent/events`, any agent's token, at most
 * MAX_STREAMS_PER_AGENT per named agent or named approver) and the console's (`/console/events`, at most
 * MAX_CONSOLE_STREAMS_PER_SESSION per console session), so agents filling theirs never keep the signed-in
 * person's console from going live, and one caller never takes a whole budget from the others.
 */
import { EventEmitter } from "node:events";
import { request as httpRequest, type ClientRequest } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  agentStreams,
  API_STREAMS,
  CONSOLE_STREAMS,
  MAX_CONSENT_STREAMS,
  MAX_CONSOLE_STREAMS_PER_SESSION,
  MAX_STREAMS_PER_AGENT,
  openConsentStream,
  StreamBudget,
} from "../src/http/routes/consent-stream.js";
import { SESSION_COOKIE, SESSION_TTL_MS } from "../src/console/session.js";
import type { ServerStores } from "../src/store/types.js";
import { at, eventually, openTokenServer, rawRequest, type TokenServer } from "./harness.js";

/** A stream's response: its client reads everything. */
class StreamResponse extends EventEmitter {
  writableLength = 0;
  destroyed = false;
  writableEnded = false;
  writeHead(): this {
    return this;
  }
  write(): boolean {
    return true;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit("close");
  }
}

const stores = { changes: { subscribe: () => () => undefined } } as unknown as ServerStores;
const server = { server: {} };
const opened: StreamResponse[] = [];

/** Opens a stream against `budget` for `key`; its response, or the error it was refused with. */
function open(budget: StreamBudget, key?: string): StreamResponse {
  const raw = new StreamResponse();
  const request = { raw: new EventEmitter(), server } as unknown as FastifyRequest;
  const reply = { hijack: () => undefined, raw } as unknown as FastifyReply;
  openConsentStream(request, reply, stores, false, budget, key === undefined ? undefined : agentStreams(key));
  opened.push(raw);
  return raw;
}

function refusal(
  budget: StreamBudget,
  key?: string,
): { status?: number; code?: string; message?: string; retryAfter?: string } {
  try {
    open(budget, key);
  } catch (err) {
    return err as { status?: number; code?: string; message?: string; retryAfter?: string };
  }
  return {};
}

afterEach(() => {
  for (const raw of opened.splice(0)) raw.destroy();
});

describe("event stream budgets", () => {
  it("a full API budget (agents' streams) leaves the console's stream free to open", () => {
    const agents = Array.from({ length: MAX_CONSENT_STREAMS / MAX_STREAMS_PER_AGENT }, (_, i) => `bot_${i}`);
    for (const agent of agents) for (let i = 0; i < MAX_STREAMS_PER_AGENT; i++) open(API_STREAMS, agent);
    expect(API_STREAMS.open).toBe(MAX_CONSENT_STREAMS);
    // a hint of when to look again (a keep-alive interval: when a stream whose client left unseen is found)
    expect(refusal(API_STREAMS)).toMatchObject({
      status: 429,
      code: "consent_queue_full",
      message: `too many open event streams (at most ${MAX_CONSENT_STREAMS}); try again in 15 s`,
      retryAfter: "15",
    });
    expect(refusal(API_STREAMS, "another_bot")).toMatchObject({ status: 429, retryAfter: "15" });
    const live = open(CONSOLE_STREAMS);
    expect(live.destroyed).toBe(false);
    expect(CONSOLE_STREAMS.open).toBe(1);
    // closing releases: the API budget opens again
    opened[0]?.destroy();
    expect(API_STREAMS.open).toBe(MAX_CONSENT_STREAMS - 1);
    expect(open(API_STREAMS).destroyed).toBe(false);
  });

  it("one named agent opens at most MAX_STREAMS_PER_AGENT API streams; others still open theirs", () => {
    for (let i = 0; i < MAX_STREAMS_PER_AGENT; i++) open(API_STREAMS, "evil_bot");
    const refused = refusal(API_STREAMS, "evil_bot");
    expect(refused).toMatchObject({ status: 429, code: "consent_queue_full" });
    expect(refused.message).toContain("`evil_bot`");
    expect(open(API_STREAMS, "alice_bot").destroyed).toBe(false);
    // a token naming no agent (the anonymous agents' token, the approvers') is bounded by the whole only
    expect(open(API_STREAMS).destroyed).toBe(false);
    expect(API_STREAMS.open).toBe(MAX_STREAMS_PER_AGENT + 2);
  });

  it("the console's budget is bounded too, and a released stream is counted once", () => {
    const budget = new StreamBudget(2);
    const first = open(budget);
    open(budget);
    expect(refusal(budget)).toMatchObject({ status: 429 });
    first.destroy();
    first.emit("close");
    expect(budget.open).toBe(1);
  });
});

/** Opens a stream on `url` with `headers`; resolves with its status once the answer's head arrives (left open). */
function openStream(
  url: string,
  headers: Record<string, string>,
  requests: ClientRequest[],
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      if (res.statusCode === 200) return resolve({ status: 200, body: "" });
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
    requests.push(req);
  });
}

describe("event stream shares of a real service", () => {
  let node: TokenServer;
  const requests: ClientRequest[] = [];
  beforeAll(async () => {
    node = await openTokenServer("stream-share", {
      token: "agents-token-0123456789",
      approverTokens: { pager: "pager-token-0123456789", desk: "desk-token-0123456789" },
    });
  });
  afterEach(async () => {
    for (const req of requests.splice(0)) req.destroy();
    await eventually(() => API_STREAMS.open === 0 && CONSOLE_STREAMS.open === 0);
  });
  afterAll(async () => {
    await node?.close();
  });

  it("a named approver's token opens at most MAX_STREAMS_PER_AGENT API streams; another approver still opens", async () => {
    const events = `${node.url}/v1/consent/events`;
    const pager = { authorization: "Bearer pager-token-0123456789" };
    for (let i = 0; i < MAX_STREAMS_PER_AGENT; i++) {
      expect((await openStream(events, pager, requests)).status).toBe(200);
    }
    const refused = await openStream(events, pager, requests);
    expect(refused.status).toBe(429);
    expect(at(JSON.parse(refused.body), "error", "message")).toContain("approver `pager`");
    expect((await openStream(events, { authorization: "Bearer desk-token-0123456789" }, requests)).status).toBe(200);
  });

  it("answers HEAD with the stream's head and ends it, holding no stream (before: no answer, one stream held)", async () => {
    const { id } = await node.node.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
    const answers = [
      [`${node.url}/v1/consent/events`, { authorization: "Bearer agents-token-0123456789" }],
      [`${node.url}/console/events`, { cookie: `${SESSION_COOKIE}=${id}` }],
    ] as const;
    for (const [url, headers] of answers) {
      const res = await rawRequest(url, { method: "HEAD", headers });
      expect({ url, status: res.status, body: res.body }).toEqual({ url, status: 200, body: "" });
    }
    expect({ api: API_STREAMS.open, console: CONSOLE_STREAMS.open }).toEqual({ api: 0, console: 0 });
  });

  it("one console session opens at most MAX_CONSOLE_STREAMS_PER_SESSION streams; another session still opens", async () => {
    const events = `${node.url}/console/events`;
    const cookieOf = async (): Promise<Record<string, string>> => {
      const { id } = await node.node.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
      return { cookie: `${SESSION_COOKIE}=${id}` };
    };
    const first = await cookieOf();
    for (let i = 0; i < MAX_CONSOLE_STREAMS_PER_SESSION; i++) {
      expect((await openStream(events, first, requests)).status).toBe(200);
    }
    const refused = await openStream(events, first, requests);
    expect(refused.status).toBe(429);
    expect(at(JSON.parse(refused.body), "error", "message")).toContain("this console session");
    expect((await openStream(events, await cookieOf(), requests)).status).toBe(200);
  });
});
