/**
 * Console sessions: an HttpOnly, SameSite=Strict cookie (Secure when served over TLS) that a one-time
 * link opens, and the CSRF token every state change must carry (header or form field), compared in
 * constant time.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ConsoleAuthStore, ConsoleSession } from "../store/types.js";
import { printable } from "./html.js";

/** The cookie's name over plain HTTP (loopback). */
export const SESSION_COOKIE = "acp_console";

/**
 * The cookie's name over TLS: the `__Host-` prefix makes the browser refuse it unless it is `Secure`, set
 * by this very host (no `Domain`) for `Path=/` — so neither a sibling subdomain nor a plain-HTTP page on
 * the host can plant or overwrite the session cookie. Only this name is read over TLS.
 */
export const TLS_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

/** The session cookie's name: {@link TLS_SESSION_COOKIE} over TLS, else {@link SESSION_COOKIE}. */
export function sessionCookieName(tls: boolean): string {
  return tls ? TLS_SESSION_COOKIE : SESSION_COOKIE;
}

/** How long a console session lasts: 12 hours. */
export const SESSION_TTL_MS = 12 * 3_600_000;

/** How long a sign-in link stays valid: 15 minutes. */
export const LINK_TTL_MS = 15 * 60_000;

/** A console approver's name: 1 to 64 letters, digits, `.`, `_`, `-` or `@`, starting with a letter or digit. */
const APPROVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/**
 * Null when `name` may name the person a sign-in link signs in (recorded as `console:NAME`, the approver
 * of every answer given in that session); otherwise what is wrong with it, without echoing more than a
 * bounded, printable part of it.
 */
export function checkApproverName(name: string): string | null {
  if (APPROVER_NAME.test(name)) return null;
  if (name.length === 0) return "the approver name is empty";
  if (name.length > 64) return `the approver name is too long (${name.length} characters, at most 64)`;
  return (
    `the approver name \`${printable(name.slice(0, 64))}\` has characters other than ` +
    "letters, digits, `.`, `_`, `-` and `@`, or does not start with a letter or digit"
  );
}

/** The approver recorded for an answer given in a console session: `console:NAME`, or `console` unnamed. */
export function consoleApprover(session: ConsoleSession): string {
  return session.approver === undefined ? "console" : `console:${session.approver}`;
}

/** Reads one cookie from the `Cookie` header. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The `Set-Cookie` value that opens (or, with `maxAgeS` 0, ends) a session. */
export function sessionCookie(value: string, options: { readonly secure: boolean; readonly maxAgeS: number }): string {
  const secure = options.secure ? "; Secure" : "";
  const name = sessionCookieName(options.secure);
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${options.maxAgeS}${secure}`;
}

/** The session behind the request's cookie (the `__Host-` one over TLS), or null. */
export async function currentSession(
  request: FastifyRequest,
  store: ConsoleAuthStore,
  nowMs: number,
  tls: boolean,
): Promise<{ readonly id: string; readonly session: ConsoleSession } | null> {
  const id = readCookie(request, sessionCookieName(tls));
  if (id === undefined) return null;
  const session = await store.getSession(id, nowMs);
  return session === null ? null : { id, session };
}

/** Whether a presented CSRF token is the session's (constant time). */
export function isCsrfTokenValid(session: ConsoleSession, presented: unknown): boolean {
  if (typeof presented !== "string" || presented.length === 0 || presented.length > 256) return false;
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(session.csrfToken).digest();
  return timingSafeEqual(a, b);
}

/**
 * Whether a state-changing request comes from this origin (when the browser says where it comes from): the
 * host it was sent to, or the public URL's origin (a reverse proxy in front may rewrite `Host`).
 */
export function isSameOrigin(request: FastifyRequest, publicOrigin?: string): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  if (publicOrigin !== undefined && origin === publicOrigin) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** Sends a redirect that also works for a form post. */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.status(303).header("location", location).send();
}
