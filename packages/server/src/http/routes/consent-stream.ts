/** The server-sent events stream of consent changes, bounded in connections and kept alive. */
import type { ServerResponse } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ServerStores } from "../../store/types.js";
import { HttpError } from "../error-body.js";
import { securityHeaders } from "../security-headers.js";

/** At most this many API event streams (`GET /v1/consent/events`, any agent's or approver's token) at once. */
export const MAX_CONSENT_STREAMS = 256;

/**
 * At most this many API event streams per token that names its caller: an agent's (`serve.agent_tokens`) or
 * an approver's (`serve.approver_tokens`).
 */
export const MAX_STREAMS_PER_AGENT = 32;

/**
 * At most this many console event streams (`GET /console/events`, a signed-in person's) at once: a budget of
 * their own, so agents filling theirs never keep the console from going live.
 */
export const MAX_CONSOLE_STREAMS = 64;

/**
 * At most this many console event streams per console session: one page open in a tab is one stream (and a
 * browser keeps at most 6 connections to one host over HTTP/1.1), so one session, or a thief of its cookie,
 * cannot take the whole console budget from the other approvers.
 */
export const MAX_CONSOLE_STREAMS_PER_SESSION = 8;

/** Whose share of a {@link StreamBudget} a stream takes: a key, and how the 429 names its holder. */
export interface StreamCaller {
  /** Distinct per caller (never shown). */
  readonly key: string;
  /** Said in the 429: "agent `ci_bot`", "approver `pager`", "this console session". */
  readonly label: string;
}

/** The share of the agent a token names (`serve.agent_tokens`). */
export function agentStreams(name: string): StreamCaller {
  return { key: `agent:${name}`, label: `agent \`${name}\`` };
}

/** The share of the approver a token names (`serve.approver_tokens`). */
export function approverStreams(name: string): StreamCaller {
  return { key: `approver:${name}`, label: `approver \`${name}\`` };
}

/** A bound on open event streams, with an optional bound per caller (the agent or approver a token names, a console session). */
export class StreamBudget {
  readonly max: number;
  readonly maxPerKey: number;
  #open = 0;
  readonly #perKey = new Map<string, number>();

  constructor(max: number, maxPerKey = Number.POSITIVE_INFINITY) {
    this.max = max;
    this.maxPerKey = maxPerKey;
  }

  /** Streams open now. */
  get open(): number {
    return this.#open;
  }

  /**
   * Takes one stream for `caller` (undefined: counted only in the whole); its release, or a 429 when full,
   * with `Retry-After` {@link STREAM_RETRY_AFTER_S}.
   */
  take(caller?: StreamCaller): () => void {
    if (this.#open >= this.max) {
      throw new HttpError(
        429,
        "consent_queue_full",
        `too many open event streams (at most ${this.max}); try again in ${STREAM_RETRY_AFTER_S} s`,
        String(STREAM_RETRY_AFTER_S),
      );
    }
    const key = caller?.key;
    const mine = key === undefined ? 0 : (this.#perKey.get(key) ?? 0);
    if (key !== undefined && mine >= this.maxPerKey) {
      throw new HttpError(
        429,
        "consent_queue_full",
        `too many open event streams for ${caller?.label ?? ""} (at most ${this.maxPerKey} each): close one of its ` +
          `streams, or try again in ${STREAM_RETRY_AFTER_S} s`,
        String(STREAM_RETRY_AFTER_S),
      );
    }
    this.#open++;
    if (key !== undefined) this.#perKey.set(key, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open--;
      if (key === undefined) return;
      const left = (this.#perKey.get(key) ?? 1) - 1;
      if (left > 0) this.#perKey.set(key, left);
      else this.#perKey.delete(key);
    };
  }
}

/** The API's streams: any token that reads, at most {@link MAX_STREAMS_PER_AGENT} per named agent or approver. */
export const API_STREAMS = new StreamBudget(MAX_CONSENT_STREAMS, MAX_STREAMS_PER_AGENT);

/** The console's streams: only the console's route takes from this budget. */
export const CONSOLE_STREAMS = new StreamBudget(MAX_CONSOLE_STREAMS, MAX_CONSOLE_STREAMS_PER_SESSION);

/** How often a comment line keeps idle proxies from closing the stream. */
export const STREAM_KEEPALIVE_MS = 15_000;

/**
 * The `Retry-After` of a 429 for too many open streams: when a stream closes nobody can tell, but one whose
 * client went away unseen is found when the next keep-alive line cannot be written, so the budget is looked
 * at again within about one keep-alive interval. A hint that keeps a client from reconnecting in a loop.
 */
export const STREAM_RETRY_AFTER_S = STREAM_KEEPALIVE_MS / 1000;

/**
 * Most bytes an event stream may have waiting to be sent: a client that stops reading is cut there (an
 * `EventSource` reconnects on its own) rather than letting the events it misses pile up in memory.
 */
export const MAX_STREAM_BACKLOG = 256 * 1024;

/** The open streams of each listening server (keyed by the Node server: one per app, whatever the plugin scope). */
const streams = new WeakMap<object, Set<ServerResponse>>();

/** Longest a stream's last bytes are waited for at shutdown (a client that stopped reading is cut then). */
const END_WAIT_MS = 1000;

/**
 * Ends every open event stream cleanly when the app closes (before its connections are dropped): the
 * response's last chunk is sent, so a client sees the stream end — an `EventSource` reconnects — instead of
 * a connection cut mid-chunk.
 */
export function endConsentStreamsOnClose(app: FastifyInstance): void {
  app.addHook("preClose", async () => {
    const live = [...(streams.get(app.server) ?? [])];
    await Promise.all(
      live.map(
        (raw) =>
          new Promise<void>((resolve) => {
            if (raw.destroyed || raw.writableFinished) return resolve();
            const timer = setTimeout(resolve, END_WAIT_MS);
            timer.unref();
            raw.once("close", () => {
              clearTimeout(timer);
              resolve();
            });
            raw.end(() => {
              clearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
  });
}

/**
 * Takes over the reply and streams `event: consent` lines until the client goes away. The stream counts
 * against `budget` (the API's unless told: the console passes its own) and, with `caller`, that caller's share.
 */
export function openConsentStream(
  request: FastifyRequest,
  reply: FastifyReply,
  stores: ServerStores,
  tls = false,
  budget: StreamBudget = API_STREAMS,
  caller?: StreamCaller,
): void {
  const head = {
    ...securityHeaders(tls),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
  };
  // HEAD: the answer's head, and the end. A HEAD answer has no body, so a stream's lines were never sent (not
  // even its head, which waits for the first write): the client waited for ever and held a stream of the budget
  if (request.method === "HEAD") {
    reply.hijack();
    reply.raw.writeHead(200, head).end();
    return;
  }
  const release = budget.take(caller);
  reply.hijack();
  const raw = reply.raw;
  const live = streams.get(request.server.server) ?? new Set<ServerResponse>();
  streams.set(request.server.server, live);
  live.add(raw);
  raw.writeHead(200, { ...head, connection: "keep-alive" });
  const send = (text: string): void => {
    if (raw.destroyed || raw.writableEnded) return;
    if (raw.writableLength > MAX_STREAM_BACKLOG) raw.destroy();
    else raw.write(text);
  };
  send(": connected\n\n");
  const unsubscribe = stores.changes.subscribe((change) => {
    send(`event: consent\ndata: ${JSON.stringify(change)}\n\n`);
  });
  const keepAlive = setInterval(() => send(": keep-alive\n\n"), STREAM_KEEPALIVE_MS);
  keepAlive.unref();
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    release();
    live.delete(raw);
    clearInterval(keepAlive);
    unsubscribe();
  };
  request.raw.once("close", close);
  raw.once("close", close);
}
