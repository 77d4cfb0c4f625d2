/**
 * Whether the first bytes of a CONNECT tunnel are a plain HTTP/1 request. A front shared by many sites (a CDN,
 * a load balancer) serves plain HTTP by the `Host` header of each request, so a tunnel let through to
 * `a.example:80` would reach `evil.example` behind the same front by naming it there, on the first request
 * or on any later one of the same connection: such a tunnel is served request by request instead, each sent
 * with the host decided (`egress-proxy.ts`).
 *
 * The test is liberal on purpose (whatever an HTTP server could take for a request line counts as one):
 * leading blank lines and spaces are skipped (servers skip them too), then a token (RFC 9110 `tchar`s), a space
 * or tab, and a line that ends in ` HTTP/…` (any case). Anything else right after the token makes it another
 * protocol (SSH's `SSH-2.0-…`, a database's binary start, Redis's `PING`), and so does a first line that does
 * not end so (SMTP's `EHLO host`).
 */

/** What the first bytes are, so far. */
export type RequestLineKind = "http" | "not_http" | "incomplete";

/** How many bytes the first line may take before the tunnel is refused. */
export const MAX_REQUEST_LINE_BYTES = 64 * 1024;

const TCHAR = /^[!#$%&'*+.^_`|~0-9A-Za-z-]$/;

/** Classifies the bytes the agent sent first in a tunnel (all of them so far). */
export function readRequestLine(bytes: Buffer): RequestLineKind {
  let i = 0;
  // blank lines and spaces before the request line, which servers skip
  while (i < bytes.length && (bytes[i] === 0x0d || bytes[i] === 0x0a || bytes[i] === 0x20 || bytes[i] === 0x09)) i++;
  const start = i;
  while (i < bytes.length && TCHAR.test(String.fromCharCode(bytes[i] ?? 0))) i++;
  if (i === bytes.length) return "incomplete";
  if ((bytes[i] !== 0x20 && bytes[i] !== 0x09) || i === start) return "not_http";
  const end = bytes.indexOf(0x0a, i);
  if (end === -1) return "incomplete";
  const line = bytes.subarray(i, end).toString("latin1").replace(/\r$/, "");
  return /\sHTTP\/\S*\s*$/i.test(line) ? "http" : "not_http";
}
