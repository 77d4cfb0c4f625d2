/** The server-sent events stream of consent changes, bounded in connections and kept alive. */
import type { FastifyReply, FastifyRequest } from "fastify";
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
  raw.writeHead(200, {
    ...securityHeaders(tls),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
  });
  const send = (text: string): void => {
    if (raw.destroyed) return;
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
    clearInterval(keepAlive);
    unsubscribe();
  };
  request.raw.once("close", close);
  raw.once("close", close);
}
