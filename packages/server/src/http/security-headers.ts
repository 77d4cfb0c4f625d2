/** Headers on every answer: a strict CSP (no inline script), no framing, no sniffing, no referrer to other origins. */
import type { FastifyInstance } from "fastify";

/** The Content-Security-Policy of the console and the API. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Adds the headers; `/docs` keeps the CSP the OpenAPI UI sets for its own files. */
export function addSecurityHeaders(app: FastifyInstance): void {
  app.addHook("onSend", (request, reply, payload, done) => {
    if (!request.url.startsWith("/docs")) reply.header("content-security-policy", CONTENT_SECURITY_POLICY);
    reply.header("x-content-type-options", "nosniff");
    reply.header("x-frame-options", "DENY");
    // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on form posts
    reply.header("referrer-policy", "same-origin");
    reply.header("cross-origin-opener-policy", "same-origin");
    if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
    done(null, payload);
  });
}
