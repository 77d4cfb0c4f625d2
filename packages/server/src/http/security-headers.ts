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
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on form posts
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
});

/** The same without the CSP: `/docs` keeps the one the OpenAPI UI sets for its own files. */
const DOCS_HEADERS = Object.freeze(
  Object.fromEntries(Object.entries(SECURITY_HEADERS).filter(([name]) => name !== "content-security-policy")),
);

/**
 * The whole header list of a JSON answer that bypasses Fastify's send path (`reply.hijack()`), as flat
 * name/value pairs for `writeHead`: the security headers, `cache-control: no-store` and the JSON content
 * type, the same set the onSend hook gives every other answer; the caller appends `content-length`.
 */
export const JSON_ANSWER_HEADERS: readonly string[] = Object.freeze([
  ...Object.entries(SECURITY_HEADERS).flat(),
  "cache-control",
  "no-store",
  "content-type",
  "application/json; charset=utf-8",
]);

/** Over TLS: browsers keep to HTTPS for this host for a year (RFC 6797). */
export const STRICT_TRANSPORT_SECURITY = "max-age=31536000";

/** Adds the headers (and, when served over TLS, `Strict-Transport-Security`). */
export function addSecurityHeaders(app: FastifyInstance, options: { readonly tls?: boolean } = {}): void {
  const tls = options.tls === true;
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.headers(request.url.startsWith("/docs") ? DOCS_HEADERS : SECURITY_HEADERS);
    if (tls) reply.header("strict-transport-security", STRICT_TRANSPORT_SECURITY);
    if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
    done(null, payload);
  });
}
