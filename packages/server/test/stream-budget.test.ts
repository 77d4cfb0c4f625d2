/**
 * Event streams are bounded in two budgets: the API's (`/v1/consent/events`, any agent's token, at most
 * MAX_STREAMS_PER_AGENT per named agent) and the console's (`/console/events`), so agents filling theirs
 * never keep the signed-in person's console from going live.
 */
import { EventEmitter } from "node:events";
import type { FastifyReply, FastifyRequest } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import {
  API_STREAMS,
  CONSOLE_STREAMS,
  MAX_CONSENT_STREAMS,
  MAX_STREAMS_PER_AGENT,
  openConsentStream,
  StreamBudget,
} from "../src/http/routes/consent-stream.js";
import type { ServerStores } from "../src/store/types.js";

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
  openConsentStream(request, reply, stores, false, budget, key);
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
