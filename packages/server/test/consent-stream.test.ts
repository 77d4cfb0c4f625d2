/** The event stream does not let the events a stalled client misses pile up in memory. */
import { EventEmitter } from "node:events";
import type { FastifyReply, FastifyRequest } from "fastify";
import { describe, expect, it } from "vitest";
import { MAX_STREAM_BACKLOG, openConsentStream } from "../src/http/routes/consent-stream.js";
import type { ServerStores } from "../src/store/types.js";

/** A response whose client never reads: every write stays buffered. */
class StalledResponse extends EventEmitter {
  writableLength = 0;
  destroyed = false;
  writeHead(): this {
    return this;
  }
  write(text: string): boolean {
    this.writableLength += Buffer.byteLength(text);
    return false;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit("close");
  }
}

describe("GET /v1/consent/events with a client that stops reading", () => {
  it("cuts the stream once its backlog passes the limit, and unsubscribes", () => {
    const raw = new StalledResponse();
    const request = { raw: new EventEmitter(), server: { server: {} } } as unknown as FastifyRequest;
    const reply = { hijack: () => undefined, raw } as unknown as FastifyReply;
    let listener: ((change: unknown) => void) | undefined;
    let unsubscribed = false;
    const stores = {
      changes: {
        subscribe: (fn: (change: unknown) => void) => {
          listener = fn;
          return () => {
            unsubscribed = true;
          };
        },
      },
    } as unknown as ServerStores;
    openConsentStream(request, reply, stores);
    const change = { kind: "pending", id: `cr_${"a".repeat(32)}`, status: "pending" };
    for (let i = 0; i < 20_000 && !raw.destroyed; i++) listener?.(change);
    expect(raw.destroyed).toBe(true);
    expect(raw.writableLength).toBeLessThan(MAX_STREAM_BACKLOG + 1024);
    expect(unsubscribed).toBe(true);
  });
});
