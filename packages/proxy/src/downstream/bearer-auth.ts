import { createHash, timingSafeEqual } from "node:crypto";

/** The outcome of checking an `Authorization` header against the configured bearer token. */
export type BearerCheck =
  { readonly ok: true } | { readonly ok: false; readonly status: 400 | 401; readonly message: string };

const BEARER = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * Checks `Authorization: Bearer <token>` in constant time (both sides hashed to equal length first); the
 * scheme name in any case (`bearer`, RFC 9110 §11.1). No header or a wrong token: 401. A header that is
 * not `Bearer <token68>`: 400.
 */
export function checkBearer(header: string | string[] | undefined, expected: string): BearerCheck {
  if (header === undefined || header === "") {
    return { ok: false, status: 401, message: "missing bearer token" };
  }
  if (Array.isArray(header)) return { ok: false, status: 400, message: "more than one authorization header" };
  const match = BEARER.exec(header);
  if (match === null)
    return { ok: false, status: 400, message: "malformed authorization header (expected `Bearer <token>`)" };
  const given = createHash("sha256")
    .update(match[1] ?? "")
    .digest();
  const wanted = createHash("sha256").update(expected).digest();
  return timingSafeEqual(given, wanted) ? { ok: true } : { ok: false, status: 401, message: "wrong bearer token" };
}

/** Whether an address to bind is loopback-only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackAddress(address: string): boolean {
  const a = address
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  return a === "localhost" || a === "::1" || /^127(\.\d{1,3}){3}$/.test(a) || a === "::ffff:127.0.0.1";
}

/** Whether a `Host` header names this machine (guards a loopback listener against DNS rebinding). */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : (host.split(":")[0] ?? "");
  return isLoopbackAddress(name);
}
