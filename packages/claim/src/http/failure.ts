import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * The one failure answer (§10, §17.3, §19.5): not found, expired, invalid, already used, wrong surface,
 * wrong token — all render these exact bytes, status and headers, and never before the minimum response
 * time measured from the request's arrival.
 */
export const FAILURE_STATUS = 404;

/** The failure body, byte for byte. */
export const FAILURE_BODY = '{"error":{"code":"not_found","message":"not found"}}';

/** Headers every failure carries (plus the common security headers every response has). */
export const FAILURE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-robots-tag": "noindex, nofollow",
};

/**
 * The rate-limit / lockout body for a wait of `retryAfterS` seconds, the same number as the answer's
 * `Retry-After`: the message says "try again in N s" and `retry_after_seconds` holds N, for clients that read
 * the body rather than the headers. The wait is the only thing in it, and it is whatever the caller passed as
 * `Retry-After` (a typed code's own limit passes the longest its counter can hold, never its real history, so
 * the body, like the header, is identical whatever code was typed: §10, §19.5).
 */
export function limitedBody(retryAfterS: number): string {
  return JSON.stringify({
    error: {
      code: "claim_rate_limited",
      message: `too many requests; try again in ${retryAfterS} s`,
      retry_after_seconds: retryAfterS,
    },
  });
}

/** When each request arrived (ms, monotonic), set by the server's first hook. */
export const ARRIVAL = new WeakMap<FastifyRequest, number>();

/** Waits until `minMs` after the request arrived. */
export async function padResponse(req: FastifyRequest, minMs: number): Promise<void> {
  const start = ARRIVAL.get(req) ?? performance.now();
  const wait = start + minMs - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

/** Sends the one failure answer after the minimum response time. */
export async function sendFailure(req: FastifyRequest, reply: FastifyReply, minMs: number): Promise<FastifyReply> {
  await padResponse(req, minMs);
  reply.removeHeader("set-cookie");
  return reply.code(FAILURE_STATUS).headers(FAILURE_HEADERS).send(FAILURE_BODY);
}

/**
 * Sends the rate-limit answer (429) after the minimum response time, with `Retry-After: retryAfterS` — when a
 * retry can succeed (see {@link retryAfterSeconds}), never a fixed guess: a sliding window can take up to an hour
 * to free a slot, and a client retrying after a minute only counts one more hit against itself. The body says the
 * same number ({@link limitedBody}).
 */
export async function sendLimited(
  req: FastifyRequest,
  reply: FastifyReply,
  minMs: number,
  retryAfterS: number,
): Promise<FastifyReply> {
  await padResponse(req, minMs);
  return reply
    .code(429)
    .headers({ ...FAILURE_HEADERS, "retry-after": String(retryAfterS) })
    .send(limitedBody(retryAfterS));
}

/** A wait in ms as `Retry-After` seconds: rounded up (never early), at least 1. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
