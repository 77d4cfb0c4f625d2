/**
 * Who may call the API: a bearer token (`ACP_BRIDGE_TOKEN` or config), compared in constant time;
 * 400 for a malformed header, 401 for a missing or wrong token. Without a configured token the API
 * answers loopback callers only, and answering consent over the API always needs a token.
 */
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

/** Checks the `Host` header of a loopback-only listener (a DNS-rebinding guard). */
export function checkHost(request: FastifyRequest, options: ApiAuthOptions): void {
  if (options.loopbackOnly && !isLoopbackHost(request.headers.host)) {
    throw new HttpError(421, "host_not_allowed", "this service answers only requests addressed to a loopback host");
  }
}

/** A `preHandler` that checks the bearer token (when one is configured). */
export function createBearerGuard(
  options: ApiAuthOptions,
  requireToken = false,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  // eslint-disable-next-line @typescript-eslint/require-await -- fastify treats an async hook's throw as the error answer
  return async (request) => {
    checkHost(request, options);
    if (options.token === undefined) {
      if (!requireToken) return;
      throw new HttpError(
        401,
        "consent_api_token_required",
        "answering consent over the API needs a bearer token: set ACP_BRIDGE_TOKEN or serve.bearer_token",
      );
    }
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
