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

/** The headers of every answer but `/docs` (built once). */
const HEADERS = Object.freeze({
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on form posts
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
});

/** The same without the CSP: `/docs` keeps the one the OpenAPI UI sets for its own files. */
const DOCS_HEADERS = Object.freeze(
  Object.fromEntries(Object.entries(HEADERS).filter(([name]) => name !== "content-security-policy")),
);

/** Adds the headers. */
export function addSecurityHeaders(app: FastifyInstance): void {
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.headers(request.url.startsWith("/docs") ? DOCS_HEADERS : HEADERS);
    if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
    done(null, payload);
  });
}
