/**
 * Who may call the API: a bearer token (`ACP_BRIDGE_TOKEN` or config), compared in constant time;
 * 400 for a malformed header, 401 for a missing or wrong token. Without a configured token the API
 * answers loopback callers only, and answering consent over the API always needs a token.
 */
import { hash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { checkBearer, isLoopbackHost } from "@acp/proxy";
import { HttpError } from "./error-body.js";

/** How the API authenticates. */
export interface ApiAuthOptions {
  /** The bearer token; absent means no token is configured. */
  readonly token?: string;
  /** Whether the service listens on loopback only (then the `Host` header must name loopback). */
  readonly loopbackOnly: boolean;
}

/** The last `Host` header found to name loopback (a client sends the same one on every request). */
let lastLoopbackHost: string | undefined;

/** Checks the `Host` header of a loopback-only listener (a DNS-rebinding guard). */
export function checkHost(request: FastifyRequest, options: ApiAuthOptions): void {
  if (!options.loopbackOnly) return;
  const host = request.headers.host;
  if (host !== undefined && host === lastLoopbackHost) return;
  if (!isLoopbackHost(host)) {
    throw new HttpError(421, "host_not_allowed", "this service answers only requests addressed to a loopback host");
  }
  lastLoopbackHost = host;
}

const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * Whether two SHA-256 hex digests are equal, in constant time: every one of the 64 digits is compared,
 * whatever differs first (the comparison `timingSafeEqual` makes, on the hex text; a string digest is
 * half the cost of a Buffer one).
 */
function sameDigest(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < 64; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The right token, found with one SHA-256 of the header's token against the configured token's digest
 * (computed once) and a constant-time comparison; false when it is not that, and `checkBearer` then
 * words the answer (400 malformed, 401 missing or wrong). The same verdicts as `checkBearer` alone.
 * One-shot `crypto.hash` to hex: no Hash object and no Buffer per request.
 */
function bearerFastPath(token: string): (header: string | string[] | undefined) => boolean {
  if (!TOKEN68.test(token)) return () => false;
  const wanted = hash("sha256", token, "hex");
  return (header) =>
    typeof header === "string" &&
    header.startsWith("Bearer ") &&
    sameDigest(hash("sha256", header.slice(7), "hex"), wanted);
}

/**
 * Checks the `Host` header and the bearer token (when one is configured); throws the {@link HttpError}
 * of the answer (421, 400, 401). Synchronous, for a route that checks inside its handler.
 */
export function createBearerCheck(options: ApiAuthOptions, requireToken = false): (request: FastifyRequest) => void {
  const rightToken = options.token === undefined ? () => false : bearerFastPath(options.token);
  return (request) => {
    checkHost(request, options);
    if (options.token === undefined) {
      if (!requireToken) return;
      throw new HttpError(
        401,
        "consent_api_token_required",
        "answering consent over the API needs a bearer token: set ACP_BRIDGE_TOKEN or serve.bearer_token",
      );
    }
    if (rightToken(request.headers.authorization)) return;
    const verdict = checkBearer(request.headers.authorization, options.token);
    if (verdict.ok) return;
    const code =
      verdict.status === 400
        ? "auth_header_malformed"
        : request.headers.authorization === undefined
          ? "auth_token_missing"
          : "auth_token_wrong";
    throw new HttpError(verdict.status, code, verdict.message);
  };
}

/**
 * An `onRequest` hook that checks the `Host` header and the bearer token (when one is configured):
 * {@link createBearerCheck} as a hook, run before the body is read, so a caller without the token gets
 * 401 and never a parse or validation error about its body.
 */
export function createBearerGuard(
  options: ApiAuthOptions,
  requireToken = false,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const check = createBearerCheck(options, requireToken);
  // eslint-disable-next-line @typescript-eslint/require-await -- fastify treats an async hook's throw as the error answer
  return async (request) => {
    check(request);
  };
}
