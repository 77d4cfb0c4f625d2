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

/** Over TLS: browsers keep to HTTPS for this host for a year (RFC 6797). */
export const STRICT_TRANSPORT_SECURITY = "max-age=31536000";

const TLS_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...SECURITY_HEADERS,
  "strict-transport-security": STRICT_TRANSPORT_SECURITY,
});

/**
 * The security headers of an answer written without Fastify's send path (`reply.hijack()`: the event
 * stream, the MCP endpoint) or before routing: {@link SECURITY_HEADERS}, plus `Strict-Transport-Security`
 * when the service is served over TLS, the set the onSend hook gives every other answer.
 */
export function securityHeaders(tls: boolean): Readonly<Record<string, string>> {
  return tls ? TLS_SECURITY_HEADERS : SECURITY_HEADERS;
}

/**
 * The whole header list of a JSON answer that bypasses Fastify's send path (`reply.hijack()`), as flat
 * name/value pairs for `writeHead` (built once per app): {@link securityHeaders}, `cache-control:
 * no-store` and the JSON content type, the same set the onSend hook gives every other answer; the caller
 * appends `content-length`.
 */
export function jsonAnswerHeaders(tls: boolean): readonly string[] {
  return Object.freeze([
    ...Object.entries(securityHeaders(tls)).flat(),
    "cache-control",
    "no-store",
    "content-type",
    "application/json; charset=utf-8",
  ]);
}

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
