/**
 * Multi-tenant mode: sessions held by id, each bound to its tenant. A tenant never reaches another tenant's
 * session, and a token is only ever checked by the session of the tenant presenting it.
 */
import { readAuthorityToken } from "./authority-token.js";
import { SessionError } from "./errors.js";
import type { AuthorizeResult } from "./session-gate.js";
import type { Session } from "./session.js";

/** Sessions of many tenants. */
export interface SessionDirectory {
  /** Adds a session (`duplicate_session` when its id is taken). */
  add(session: Session): void;
  /** The session `id` of `tenant`: `unknown_session`, or `cross_tenant` when it belongs to another tenant. */
  get(tenant: string, id: string): Session;
  /** Drops a session of `tenant` (same checks as `get`). */
  remove(tenant: string, id: string): void;
  /** The gate for a tenant: finds the token's session and lets it decide; other tenants' tokens are refused. */
  authorize(tenant: string, token: unknown, request: unknown): AuthorizeResult;
  readonly size: number;
}

/** Creates an empty directory. */
export function createSessionDirectory(): SessionDirectory {
  const sessions = new Map<string, Session>();
  const get = (tenant: string, id: string): Session => {
    const session = sessions.get(id);
    if (session === undefined) throw new SessionError("unknown_session", `no session \`${id.slice(0, 128)}\``);
    if (session.tenant !== tenant) {
      throw new SessionError(
        "cross_tenant",
        `tenant \`${tenant.slice(0, 128)}\` may not use a session of another tenant`,
      );
    }
    return session;
  };
  return {
    add(session) {
      if (sessions.has(session.id))
        throw new SessionError("duplicate_session", `a session \`${session.id}\` exists already`);
      sessions.set(session.id, session);
    },
    get,
    remove(tenant, id) {
      get(tenant, id);
      sessions.delete(id);
    },
    authorize(tenant, token, request) {
      const read = readAuthorityToken(token);
      if (!read.ok) return { ok: false, code: read.code, message: read.message };
      if (read.token.tenant !== tenant)
        return { ok: false, code: "token_wrong_tenant", message: "the authority token belongs to another tenant" };
      const session = sessions.get(read.token.session);
      if (session === undefined || session.tenant !== tenant) {
        return {
          ok: false,
          code: "token_wrong_session",
          message: "no session of this tenant issued the authority token",
        };
      }
      return session.authorize(token, request);
    },
    get size() {
      return sessions.size;
    },
  };
}
