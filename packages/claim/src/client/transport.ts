import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { ClaimClientError } from "./client-error.js";

/** A response as the client sees it. */
export interface ClientResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/**
 * Sends one HTTP request. A transport follows no redirect (a 3xx is returned as it came) and should hold to its
 * own size and time limits; {@link ClaimClient} still refuses an answer over its size cap and any redirect.
 */
export type Transport = (
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
) => Promise<ClientResponse>;

/** The client's default limits on one provider answer. */
export const RESPONSE_LIMITS = {
  /** Largest answer body read, in bytes (1 MiB; the protocol's answers are a few KB). */
  maxBytes: 1024 * 1024,
  /** Longest one request may take, from sending to the last byte of the answer, in ms (30 s). */
  timeoutMs: 30_000,
} as const;

/** Options of {@link nodeTransport}. */
export interface NodeTransportOptions {
  /** Connect to this address for every host (tests, split-horizon setups). */
  readonly connectTo?: string;
  /** Cut off and refuse an answer longer than this many bytes (default {@link RESPONSE_LIMITS}.maxBytes). */
  readonly maxResponseBytes?: number;
  /** Give up a request not answered in full within this many ms (default {@link RESPONSE_LIMITS}.timeoutMs). */
  readonly timeoutMs?: number;
}

/** The refusal of an answer over `max` bytes. */
export function tooLarge(host: string, max: number): ClaimClientError {
  return new ClaimClientError(
    `answer from \`${host}\` is over the client's limit of ${max} bytes; cut off`,
    0,
    "claim_response_too_large",
  );
}

/** Reads `res` up to `max` bytes; past that (announced or streamed) the socket is destroyed and `fail` called. */
function readCapped(
  res: IncomingMessage,
  host: string,
  max: number,
  fail: (err: Error) => void,
  done: (body: Buffer) => void,
): void {
  const announced = Number(res.headers["content-length"]);
  if (Number.isFinite(announced) && announced > max) return fail(tooLarge(host, max));
  const chunks: Buffer[] = [];
  let size = 0;
  res.on("data", (c: Buffer) => {
    size += c.length;
    if (size > max) return fail(tooLarge(host, max));
    chunks.push(c);
  });
  res.on("end", () => done(Buffer.concat(chunks)));
  res.on("error", fail);
}

/**
 * The default transport: node:http(s), no redirects followed, answers capped in size and each request in time
 * (the whole exchange, not only idle gaps, so a provider trickling a byte at a time is cut off too). A host under
 * `.localhost` is connected to on 127.0.0.1 (RFC 6761: `*.localhost` is loopback) while the Host header keeps
 * the name, so the default provider works with no DNS. A string argument is `connectTo` (the older signature).
 */
export function nodeTransport(options: string | NodeTransportOptions = {}): Transport {
  const o: NodeTransportOptions = typeof options === "string" ? { connectTo: options } : options;
  const max = o.maxResponseBytes ?? RESPONSE_LIMITS.maxBytes;
  const timeoutMs = o.timeoutMs ?? RESPONSE_LIMITS.timeoutMs;
  return (method, url, headers, body) =>
    new Promise((resolve, reject) => {
      const u = new URL(url);
      const loop = u.hostname === "localhost" || u.hostname.endsWith(".localhost");
      const send = u.protocol === "https:" ? httpsRequest : httpRequest;
      const req = send(
        {
          method,
          hostname: o.connectTo ?? (loop ? "127.0.0.1" : u.hostname),
          port: u.port === "" ? undefined : Number(u.port),
          path: `${u.pathname}${u.search}`,
          headers: {
            ...headers,
            host: u.host,
            ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }),
          },
          servername: u.hostname,
        },
        (res) =>
          readCapped(res, u.host, max, fail, (b) =>
            finish({ status: res.statusCode ?? 0, headers: res.headers, body: b.toString("utf8") }),
          ),
      );
      const timer = setTimeout(
        () =>
          fail(
            new ClaimClientError(
              `request to \`${u.host}\` not answered within the client's limit of ${timeoutMs} ms`,
              0,
              "claim_timeout",
            ),
          ),
        timeoutMs,
      );
      function finish(r: ClientResponse): void {
        clearTimeout(timer);
        resolve(r);
      }
      function fail(err: Error): void {
        clearTimeout(timer);
        reject(err);
        req.destroy();
      }
      req.on("error", fail);
      req.end(body);
    });
}
