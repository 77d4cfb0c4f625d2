/** The web console: sign-in, pending approvals (live), the audit trail, the policy simulator. */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Decision } from "@acp/core";
import { errorBody, HttpError } from "../http/error-body.js";
import { checkHost, type ApiAuthOptions } from "../http/api-auth.js";
import { CONSOLE_STREAMS, openConsentStream } from "../http/routes/consent-stream.js";
import { toAuditQuery } from "../http/routes/audit.js";
import { answerConsent, viewConsent, type ConsentAnswerInput } from "../service/consent-view.js";
import { decodeConsentCursor, listConsentPage } from "../service/consent-listing.js";
import type { ConsoleSession, ServerStores } from "../store/types.js";
import { renderPage } from "./html.js";
import { renderAuditPage, type AuditSearch } from "./pages/audit.js";
import { renderConsentCard, renderPendingFragment, renderPendingPage, type PendingPageView } from "./pages/pending.js";
import { renderSignedOutPage, renderSignInPage } from "./pages/sign-in.js";
import { renderSimulatePage } from "./pages/simulate.js";
import {
  consoleApprover,
  currentSession,
  isCsrfTokenValid,
  isSameOrigin,
  seeOther,
  sessionCookie,
  SESSION_TTL_MS,
} from "./session.js";
import { CONSENT_ID_PARAMS, CONSENT_RESPONSE_BODY } from "../http/schemas.js";

/** What the console needs. */
export interface ConsoleDeps {
  readonly stores: ServerStores;
  readonly clock: () => Date;
  /**
   * Decides a request without recording it or spending rate limits (the simulator): `decision` as
   * `/v1/decide` decides it for a caller whose `server` is only its word (the agents' token, an agent without
   * `serve.agent_servers`, loopback without a token; ADR 0006), `heldToServer` as for an agent held to servers
   * that may name the request's `server` (null when it names none: such an agent is refused 403).
   */
  readonly simulate: (request: unknown) => Promise<{ decision: Decision; heldToServer: Decision | null }>;
  /** Whether the service is served over TLS (the cookie is then `Secure`). */
  readonly tls: boolean;
  /** The public URL's origin (a reverse proxy in front): a state change from it is same-origin. */
  readonly publicOrigin?: string;
  readonly auth: ApiAuthOptions;
}

/**
 * The console's own files, found through the package's name (`@acp/server/static/…`), not next to this module:
 * the `acp` command runs this code bundled elsewhere (scripts/bundle-cli.mjs).
 */
const fromHere = createRequire(import.meta.url);
const staticFile = (name: string): string => fromHere.resolve(`@acp/server/static/${name}`);
const STATIC_FILES: Readonly<Record<string, string>> = {
  "console.js": "text/javascript; charset=utf-8",
  "console.css": "text/css; charset=utf-8",
};

/** Requests on one page of pending approvals (the rest are counted, a "next page" away). */
export const CONSOLE_PENDING_PAGE = 20;
/**
 * Beyond the first, one page reads at most this many bytes of stored requests (`listPendingPage`): the live
 * refresh reads the page again at each consent event, so a flood of megabyte requests costs this per refresh.
 */
export const CONSOLE_PENDING_READ_BYTES = 4 * 1024 * 1024;
/** The listed requests of one page stop before this many bytes of JSON (`listConsentPage`). */
export const CONSOLE_PENDING_BYTES = 512 * 1024;

function html(reply: FastifyReply, body: string, status = 200): FastifyReply {
  return reply.status(status).type("text/html; charset=utf-8").send(body);
}

/** Registers every console route under `/console`. */
export function registerConsole(app: FastifyInstance, deps: ConsoleDeps): void {
  const { stores, clock } = deps;
  const statics = new Map(Object.keys(STATIC_FILES).map((name) => [name, readFileSync(staticFile(name), "utf8")]));
  // the page names its code (docs/reference/errors.md) for anyone looking it up
  const signedOut = (reply: FastifyReply, message: string, status = 401, code?: string): FastifyReply =>
    html(reply, renderPage({ title: "Sign in", page: "none", body: renderSignedOutPage(message, code) }), status);

  /**
   * A page of the waiting requests, as `GET /v1/consent` lists them (the store reads a bounded page, each
   * request's arguments shortened): a flood of requests with megabyte arguments is never read or sent whole,
   * at each live refresh. `after` is the address's cursor; one that is not this console's starts at the oldest.
   */
  const pendingPage = async (request: FastifyRequest): Promise<PendingPageView> => {
    const raw = (request.query as { after?: unknown } | null)?.after;
    let after: ReturnType<typeof decodeConsentCursor> | undefined;
    let badCursor = false;
    if (typeof raw === "string" && raw !== "") {
      try {
        after = decodeConsentCursor(raw);
      } catch {
        badCursor = true;
      }
    } else if (raw !== undefined && raw !== "") badCursor = true;
    const now = clock().getTime();
    const [read, ids] = await Promise.all([
      stores.pending.listPendingPage(now, {
        limit: CONSOLE_PENDING_PAGE,
        maxBytes: CONSOLE_PENDING_READ_BYTES,
        ...(after !== undefined ? { after } : {}),
      }),
      stores.pending.listPendingIds(now),
    ]);
    const listed = listConsentPage(read, CONSOLE_PENDING_BYTES);
    // a shortened card still warns of a hidden character or a look-alike letter in what it leaves out
    const rows = new Map(read.rows.map((row) => [row.id, row]));
    const cards = listed.requests.map((view) => {
      const row = view.shortened === null ? undefined : rows.get(view.id);
      return row === undefined ? view : { ...view, warnWith: viewConsent(row) };
    });
    return { cards, waiting: ids.length, next: listed.next, paged: after !== undefined, badCursor };
  };

  const page =
    (fn: (request: FastifyRequest) => Promise<[string, ConsolePageName, string]>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      checkHost(request, deps.auth);
      const current = await currentSession(request, stores.consoleAuth, clock().getTime(), deps.tls);
      if (current === null)
        return signedOut(reply, "You are not signed in, or your session ended.", 401, "console_session_required");
      const [title, name, body] = await fn(request);
      const { approver } = current.session;
      return html(
        reply,
        renderPage({
          title,
          page: name,
          body,
          signedIn: true,
          ...(approver !== undefined ? { signedInAs: approver } : {}),
        }),
      );
    };

  /** For JSON calls from the script: a session, the same origin and the CSRF header. */
  const sessions = new WeakMap<FastifyRequest, ConsoleSession>();
  const stateChange = async (request: FastifyRequest): Promise<void> => {
    checkHost(request, deps.auth);
    const current = await currentSession(request, stores.consoleAuth, clock().getTime(), deps.tls);
    if (current === null) throw new HttpError(401, "console_session_required", "sign in to the console first");
    if (
      !isSameOrigin(request, deps.publicOrigin) ||
      !isCsrfTokenValid(current.session, request.headers["x-csrf-token"])
    ) {
      throw new HttpError(403, "csrf_token_invalid", "missing or wrong CSRF token");
    }
    sessions.set(request, current.session);
  };
  const readOnly = async (request: FastifyRequest): Promise<void> => {
    checkHost(request, deps.auth);
    if ((await currentSession(request, stores.consoleAuth, clock().getTime(), deps.tls)) === null) {
      throw new HttpError(401, "console_session_required", "sign in to the console first");
    }
  };
  const hidden = { schema: { hide: true } };

  app.get("/console/static/:file", hidden, (request, reply) => {
    const { file } = request.params as { file: string };
    const body = statics.get(file);
    const type = STATIC_FILES[file];
    if (body === undefined || type === undefined) return reply.status(404).send(errorBody("not_found", "no such file"));
    return reply.type(type).header("cache-control", "no-cache").send(body);
  });
  app.get("/console/login", hidden, (request, reply) => {
    checkHost(request, deps.auth);
    const token = (request.query as { token?: unknown }).token;
    if (typeof token !== "string" || token === "")
      return signedOut(reply, "This sign-in link has no token.", 400, "console_link_invalid");
    return html(reply, renderPage({ title: "Sign in", page: "none", body: renderSignInPage(token) }));
  });
  app.post("/console/login", hidden, async (request, reply) => {
    checkHost(request, deps.auth);
    const token = (request.body as Record<string, unknown> | null)?.["token"];
    const now = clock().getTime();
    const redeemed =
      isSameOrigin(request, deps.publicOrigin) && typeof token === "string"
        ? await stores.consoleAuth.redeemLink(token, now)
        : null;
    if (redeemed === null) {
      return signedOut(reply, "This sign-in link is invalid, already used or expired.", 401, "console_link_invalid");
    }
    // a session this browser already had ends: its cookie is replaced, and a copy of it (browsers send a
    // loopback host's cookies to every port) must not outlive it
    const previous = await currentSession(request, stores.consoleAuth, now, deps.tls);
    if (previous !== null) await stores.consoleAuth.deleteSession(previous.id);
    // the name the link carried (acp console-link --as NAME) is the approver of every answer of the session
    const { id, session } = await stores.consoleAuth.createSession(now, SESSION_TTL_MS, redeemed.approver);
    reply.header("set-cookie", sessionCookie(id, { secure: deps.tls, maxAgeS: SESSION_TTL_MS / 1000 }));
    // The session's CSRF token goes to this browser once, in the redirect's fragment (never sent to a
    // server, taken out of the address by the script): the script keeps it in this origin's localStorage.
    // Browsers send a loopback console's cookie to every port of the host, so a local web server the
    // person opens (an agent's dev server) can receive the cookie; without the token it can answer nothing.
    return seeOther(reply, `/console/pending#key=${encodeURIComponent(session.csrfToken)}`);
  });
  app.post("/console/logout", hidden, async (request, reply) => {
    checkHost(request, deps.auth);
    const current = await currentSession(request, stores.consoleAuth, clock().getTime(), deps.tls);
    const csrf = (request.body as Record<string, unknown> | null)?.["csrf"];
    // A session that already ended (expired, or signed out in another tab) has nothing left to end: the
    // button of a page left open says "signed out" instead of a 403 a person cannot act on
    if (current !== null) {
      if (!isSameOrigin(request, deps.publicOrigin) || !isCsrfTokenValid(current.session, csrf)) {
        throw new HttpError(403, "csrf_token_invalid", "missing or wrong CSRF token");
      }
      await stores.consoleAuth.deleteSession(current.id);
    }
    reply.header("set-cookie", sessionCookie("", { secure: deps.tls, maxAgeS: 0 }));
    return signedOut(reply, "You are signed out.", 200);
  });
  app.get("/console", hidden, (_request, reply) => seeOther(reply, "/console/pending"));
  // a page address typed with a trailing slash, or wrong: a page for a person, not an API error body
  const PAGES = new Set(["/console/pending", "/console/audit", "/console/simulate", "/console/login"]);
  app.get("/console/*", hidden, (request, reply) => {
    checkHost(request, deps.auth);
    const [path = "", query = ""] = request.url.split(/\?(.*)/s);
    const trimmed = path.replace(/\/+$/, "");
    if (trimmed !== path && PAGES.has(trimmed)) return seeOther(reply, query === "" ? trimmed : `${trimmed}?${query}`);
    const body = `<h1>No such page</h1>
<p>The console has <a href="/console/pending">pending approvals</a>, the <a href="/console/audit">audit trail</a> and the <a href="/console/simulate">policy simulator</a>.</p>`;
    return html(reply, renderPage({ title: "No such page", page: "none", body }), 404);
  });
  app.get(
    "/console/pending",
    hidden,
    page(async (request) => ["Pending approvals", "pending", renderPendingPage(await pendingPage(request))]),
  );
  app.get(
    "/console/audit",
    hidden,
    page(async (request) => {
      const raw = request.query as Record<string, unknown>;
      const keys = ["q", "event_type", "tool", "decision"];
      const search: AuditSearch = Object.fromEntries(
        keys.flatMap((k) => {
          const v = raw[k];
          return typeof v === "string" && v !== "" && v.length <= 256 ? [[k, v]] : [];
        }),
      );
      // a filter that cannot be applied is said, never silently dropped (the page would show every event)
      const ignored = keys.filter((k) => {
        const v = raw[k];
        return (typeof v === "string" && v.length > 256) || Array.isArray(v);
      });
      const before =
        typeof raw["before"] === "string" && /^[0-9]{1,9}$/.test(raw["before"]) ? raw["before"] : undefined;
      const query = toAuditQuery({ ...search, limit: "100", ...(before !== undefined ? { before } : {}) });
      const [list, verification] = await Promise.all([stores.audit.list(query), stores.audit.verify()]);
      const page = renderAuditPage(list, verification, search, before === undefined ? undefined : Number(before));
      const note =
        ignored.length === 0
          ? ""
          : `<p class="session-ended" role="alert">Not applied: ${ignored.join(", ")} (a filter is one value of at most 256 characters). The events below are not filtered by it.</p>\n`;
      return ["Audit trail", "audit", note + page];
    }),
  );
  app.get(
    "/console/simulate",
    hidden,
    page(() => Promise.resolve(["Policy simulator", "simulate", renderSimulatePage()])),
  );
  app.get("/console/fragments/pending", hidden, async (request, reply) => {
    await readOnly(request);
    return html(reply, renderPendingFragment(await pendingPage(request)));
  });
  // One request's card whole, for a card listed shortened ("Show the whole request", and before editing): read
  // on demand for that one card, never for the whole page. The arguments are the request's own: a session, the
  // same origin and the CSRF header, as for an answer (the cookie alone reaches other local servers).
  app.get(
    "/console/fragments/consent/:id",
    { onRequest: stateChange, schema: { hide: true, params: CONSENT_ID_PARAMS } },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const row = await stores.pending.get(id);
      if (row === null) throw new HttpError(404, "consent_request_unknown", `no consent request \`${id}\``);
      return html(reply, renderConsentCard(viewConsent(row)));
    },
  );
  app.get("/console/events", hidden, async (request, reply) => {
    checkHost(request, deps.auth);
    const current = await currentSession(request, stores.consoleAuth, clock().getTime(), deps.tls);
    if (current === null) throw new HttpError(401, "console_session_required", "sign in to the console first");
    // each session has a share of the console's budget (the key is the session's digest, kept in memory only)
    const key = `session:${createHash("sha256").update(current.id).digest("hex")}`;
    openConsentStream(request, reply, stores, deps.tls, CONSOLE_STREAMS, { key, label: "this console session" });
  });
  // one request's state, for a card whose request left the pending list (answered elsewhere, expired)
  app.get(
    "/console/api/consent/:id",
    { onRequest: readOnly, schema: { hide: true, params: CONSENT_ID_PARAMS } },
    async (request) => {
      const { id } = request.params as { id: string };
      const row = await stores.pending.get(id);
      if (row === null) throw new HttpError(404, "consent_request_unknown", `no consent request \`${id}\``);
      const view = viewConsent(row);
      return { id: view.id, status: view.status, decided_at: view.decided_at, expires_at: view.expires_at };
    },
  );
  // the session and CSRF checks run before the body is read: without them, 401/403 and no word on the body
  app.post(
    "/console/api/consent/:id",
    { onRequest: stateChange, schema: { hide: true, params: CONSENT_ID_PARAMS, body: CONSENT_RESPONSE_BODY } },
    async (request) => {
      const { id } = request.params as { id: string };
      const body = request.body as ConsentAnswerInput & { approver_id?: string };
      const session = sessions.get(request);
      if (session === undefined) throw new HttpError(401, "console_session_required", "sign in to the console first");
      const view = await answerConsent(stores.pending, id, body, consoleApprover(session), clock(), "console");
      stores.changes.poke();
      return view;
    },
  );
  app.post("/console/api/simulate", { onRequest: stateChange, schema: { hide: true } }, async (request) => {
    const { decision, heldToServer } = await deps.simulate(request.body);
    const shown = (d: Decision): Record<string, unknown> => ({
      route: d.route,
      rule: d.rule,
      category: d.category,
      risk_level: d.risk_level,
      reasons: d.reasons,
    });
    // the answer as the agents' token gets it; an agent held to servers beside it (ADR 0006)
    return { ...shown(decision), held_to_server: heldToServer === null ? null : shown(heldToServer) };
  });
}

type ConsolePageName = "pending" | "audit" | "simulate";
