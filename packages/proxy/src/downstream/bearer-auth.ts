import { createHash, timingSafeEqual } from "node:crypto";

/** The outcome of checking an `Authorization` header against the configured bearer token. */
export type BearerCheck =
  { readonly ok: true } | { readonly ok: false; readonly status: 400 | 401; readonly message: string };

const BEARER = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

/** An agent's name in named tokens (`proxy.agent_tokens.NAME`, `serve.agent_tokens.NAME`): what a config key path takes. */
export const AGENT_TOKEN_NAME = /^[a-z_][a-z0-9_]{0,63}$/;

/** The token of a well-formed `Authorization: Bearer <token68>` header, or the refusal (400, 401). */
function bearerOf(
  header: string | string[] | undefined,
): { readonly token: string } | { readonly ok: false; readonly status: 400 | 401; readonly message: string } {
  if (header === undefined || header === "") {
    return { ok: false, status: 401, message: "missing bearer token" };
  }
  if (Array.isArray(header)) return { ok: false, status: 400, message: "more than one authorization header" };
  const match = BEARER.exec(header);
  if (match === null)
    return { ok: false, status: 400, message: "malformed authorization header (expected `Bearer <token>`)" };
  return { token: match[1] ?? "" };
}

const sha256 = (text: string): Buffer => createHash("sha256").update(text).digest();

/**
 * Checks `Authorization: Bearer <token>` in constant time (both sides hashed to equal length first); the
 * scheme name in any case (`bearer`, RFC 9110 §11.1). No header or a wrong token: 401. A header that is
 * not `Bearer <token68>`: 400.
 */
export function checkBearer(header: string | string[] | undefined, expected: string): BearerCheck {
  const given = bearerOf(header);
  if (!("token" in given)) return given;
  return timingSafeEqual(sha256(given.token), sha256(expected))
    ? { ok: true }
    : { ok: false, status: 401, message: "wrong bearer token" };
}

/** Who a request's token says it is: the shared token (no name), a named agent, or the refusal. */
export type BearerIdentity =
  | { readonly ok: true; readonly agent?: string }
  | { readonly ok: false; readonly status: 400 | 401; readonly message: string };

/**
 * The check of a listener that takes a shared token and tokens that name their agent (name → token):
 * one SHA-256 of the presented token, compared in constant time with the shared token's digest and
 * looked up among the named ones' (a map of digests: what is looked up is a hash, never the token).
 * With neither configured, every request passes without a name. Same wording as {@link checkBearer}.
 */
export function createBearerIdentity(
  shared: string | undefined,
  named: ReadonlyMap<string, string> = new Map(),
): (header: string | string[] | undefined) => BearerIdentity {
  const sharedDigest = shared === undefined || shared === "" ? undefined : sha256(shared);
  const byDigest = new Map([...named].map(([name, token]) => [sha256(token).toString("hex"), name]));
  if (sharedDigest === undefined && byDigest.size === 0) return () => ({ ok: true });
  return (header) => {
    const given = bearerOf(header);
    if (!("token" in given)) return given;
    const digest = sha256(given.token);
    const agent = byDigest.get(digest.toString("hex"));
    if (agent !== undefined) return { ok: true, agent };
    if (sharedDigest !== undefined && timingSafeEqual(digest, sharedDigest)) return { ok: true };
    return { ok: false, status: 401, message: "wrong bearer token" };
  };
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

/**
 * Whether a request's `Origin` may reach a loopback listener (a DNS-rebinding and cross-site guard of `acp
 * proxy --http` and `acp serve`): none (a program, not a page), a loopback origin (a local page), or
 * `publicOrigin` (the public URL of a reverse proxy in front). `Origin: null` is what a browser sends from an
 * opaque context (a sandboxed iframe on any site, a `data:` or `file:` page): it says nothing about where the
 * page came from, so it is not local.
 */
export function isLocalOrigin(origin: string | undefined, publicOrigin?: string): boolean {
  if (origin === undefined) return true;
  if (publicOrigin !== undefined && origin === publicOrigin) return true;
  try {
    return isLoopbackAddress(new URL(origin).hostname);
  } catch {
    return false;
  }
}
