/** The server-sent events stream of consent changes, bounded in connections and kept alive. */
import type { ServerResponse } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ServerStores } from "../../store/types.js";
import { HttpError } from "../error-body.js";
import { securityHeaders } from "../security-headers.js";

/** At most this many streams are open at once. */
export const MAX_CONSENT_STREAMS = 256;

/** How often a comment line keeps idle proxies from closing the stream. */
export const STREAM_KEEPALIVE_MS = 15_000;

/**
 * Most bytes an event stream may have waiting to be sent: a client that stops reading is cut there (an
 * `EventSource` reconnects on its own) rather than letting the events it misses pile up in memory.
 */
export const MAX_STREAM_BACKLOG = 256 * 1024;

let open = 0;

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

/** Takes over the reply and streams `event: consent` lines until the client goes away. */
export function openConsentStream(
  request: FastifyRequest,
  reply: FastifyReply,
  stores: ServerStores,
  tls = false,
): void {
  if (open >= MAX_CONSENT_STREAMS) throw new HttpError(429, "consent_queue_full", "too many open event streams");
  open++;
  reply.hijack();
  const raw = reply.raw;
  const live = streams.get(request.server.server) ?? new Set<ServerResponse>();
  streams.set(request.server.server, live);
  live.add(raw);
  raw.writeHead(200, {
    ...securityHeaders(tls),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
  });
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
    open--;
    live.delete(raw);
    clearInterval(keepAlive);
    unsubscribe();
  };
  request.raw.once("close", close);
  raw.once("close", close);
}
