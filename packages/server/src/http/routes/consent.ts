/** Consent over HTTP: list, read and answer requests; a server-sent events stream of changes. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { PendingConsentRow } from "@acp/store";
import type { ServerStores } from "../../store/types.js";
import type { CompletedConsent } from "../../service/consent-completion.js";
import { requirePrintableField } from "../printable-body.js";
import { answerConsent, viewConsent, type ConsentAnswerInput } from "../../service/consent-view.js";
import {
  CONSENT_LIST_READ_BYTES,
  consentPageLimit,
  decodeConsentCursor,
  listConsentPage,
} from "../../service/consent-listing.js";
import { callerAgent, callerApprover, readsAsAgentsToken } from "../api-auth.js";
import { ERROR_BODY_SCHEMA, HttpError } from "../error-body.js";
import {
  CONSENT_ID_PARAMS,
  CONSENT_LIST_QUERY,
  CONSENT_RESPONSE_BODY,
  ERROR_RESPONSES,
  READ_SECURITY,
  withRetryAfter,
} from "../schemas.js";
import {
  COMPLETED_CONSENT_ANSWER,
  CONSENT_LIST_ANSWER,
  CONSENT_VIEW_ANSWER,
  serializeWithJson,
  TEXT_ANSWER,
} from "../answer-schemas.js";
import { agentStreams, API_STREAMS, approverStreams, openConsentStream } from "./consent-stream.js";

type Guard = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** What the consent routes need. */
export interface ConsentRouteDeps {
  readonly stores: ServerStores;
  readonly clock: () => Date;
  /** The guard of the read routes: either token. */
  readonly guard: Guard;
  /** The guard of `POST …/response`: the approvers' token, required even when the rest of the API is open. */
  readonly answerGuard: Guard;
  /** The guard of `POST …/complete`: the agents' token, required. */
  readonly completeGuard: Guard;
  /** Completes a request whose waiting call is gone (`POST /v1/consent/{id}/complete`). */
  readonly complete?: (id: string, signal: AbortSignal, caller?: string) => Promise<CompletedConsent>;
  /** Served over TLS: the event stream also carries `Strict-Transport-Security`. */
  readonly tls?: boolean;
  /** The names of the approvers' tokens that name their approver: the unnamed token may not answer as one. */
  readonly approverNames?: ReadonlySet<string>;
}

/**
 * The agent whose named token raised a pending request, or undefined when it was raised without one. A named
 * token's sessions are `NAME/…` and only that token may name such a session (the anonymous agents' token is
 * refused a session with `/`), so the row's session is the marker; the row's agent must agree (a row whose
 * agent cannot be read, in a namespace, belongs to nobody who may complete it: "").
 */
function namedOwner(row: PendingConsentRow): string | undefined {
  const session = row.sessionId;
  const slash = session?.indexOf("/") ?? -1;
  if (session === null || slash < 0) return undefined;
  const name = session.slice(0, slash);
  const agent = (row.request as { agent?: { id?: unknown } } | null)?.agent?.id;
  return agent === name ? name : "";
}

/**
 * The consent requests a read may see, or undefined for all of them (an approvers' token; an open loopback
 * API). An agent's token sees only those raised with it: a named agent's its own, the unnamed agents' token
 * those raised with it (neither a named agent's nor an `acp proxy`'s), so no agent reads the arguments of
 * another agent's calls.
 */
function visibleTo(request: FastifyRequest): ((row: PendingConsentRow) => boolean) | undefined {
  const agent = callerAgent(request);
  if (agent !== undefined) return (row) => row.owner === null && namedOwner(row) === agent;
  if (readsAsAgentsToken(request)) return (row) => row.owner === null && namedOwner(row) === undefined;
  return undefined;
}

/** Registers `GET /v1/consent`, `GET /v1/consent/events`, `GET /v1/consent/{id}`, `POST /v1/consent/{id}/response`. */
export function registerConsentRoutes(app: FastifyInstance, deps: ConsentRouteDeps): void {
  const { stores, clock } = deps;
  app.get(
    "/v1/consent",
    {
      onRequest: deps.guard,
      schema: {
        summary: "list consent requests waiting for a person, a page at a time",
        description:
          "Oldest first, `limit` a page (default 50, at most 200), then `?after=` the answer's `next` until it is " +
          "null. Each request's arguments are cut to their first values (4,096 bytes of JSON) and any long text " +
          "to its ends, marked `shortened` with the bytes left out; `GET /v1/consent/{id}` has the whole. A page " +
          "stops before 1 MiB. An agent's token lists only the requests raised with it (the approvers' every one).",
        tags: ["consent"],
        security: READ_SECURITY,
        querystring: CONSENT_LIST_QUERY,
        response: { 200: CONSENT_LIST_ANSWER, ...ERROR_RESPONSES },
      },
      serializerCompiler: serializeWithJson,
    },
    async (request) => {
      const query = request.query as { limit?: string; after?: string };
      const limit = consentPageLimit(query.limit);
      const after = query.after === undefined ? undefined : decodeConsentCursor(query.after);
      const page = await stores.pending.listPendingPage(clock().getTime(), {
        limit,
        maxBytes: CONSENT_LIST_READ_BYTES,
        ...(after !== undefined ? { after } : {}),
      });
      // an agent's token: the page as read, its rows those the agent may see (a page may then hold fewer,
      // or none, while `next` goes on)
      const visible = visibleTo(request);
      return listConsentPage(visible === undefined ? page : { ...page, rows: page.rows.filter(visible) });
    },
  );
  app.get(
    "/v1/consent/events",
    {
      onRequest: deps.guard,
      schema: {
        summary: "server-sent events: `consent` events as requests are raised and settled",
        tags: ["consent"],
        security: READ_SECURITY,
        response: {
          200: TEXT_ANSWER(
            "text/event-stream",
            'a stream of `event: consent` with `data: {"kind":"pending"|"settled","id","status"}`',
          ),
          429: withRetryAfter(
            { ...ERROR_BODY_SCHEMA, "x-response-description": "consent_queue_full: too many open event streams" },
            "a hint, one keep-alive interval (15): when a stream whose client left unseen is found and closed",
          ),
          ...ERROR_RESPONSES,
        },
      },
    },
    (request, reply) => {
      // a token that names its caller has a share of its own; the unnamed tokens share the whole
      const agent = callerAgent(request);
      const approver = callerApprover(request);
      const caller =
        agent !== undefined ? agentStreams(agent) : approver !== undefined ? approverStreams(approver) : undefined;
      openConsentStream(request, reply, stores, deps.tls === true, API_STREAMS, caller);
    },
  );
  app.get(
    "/v1/consent/:id",
    {
      onRequest: deps.guard,
      schema: {
        summary: "one consent request",
        description: "404 also for a request an agent's token did not raise: an agent reads only its own.",
        tags: ["consent"],
        security: READ_SECURITY,
        params: CONSENT_ID_PARAMS,
        response: { 200: CONSENT_VIEW_ANSWER, 404: ERROR_BODY_SCHEMA, ...ERROR_RESPONSES },
      },
      serializerCompiler: serializeWithJson,
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const row = await stores.pending.get(id);
      // another caller's request is unknown to an agent's token, as one that does not exist
      const visible = visibleTo(request);
      if (row === null || (visible !== undefined && !visible(row))) {
        throw new HttpError(404, "consent_request_unknown", `no consent request \`${id}\``);
      }
      return viewConsent(row);
    },
  );
  app.post(
    "/v1/consent/:id/response",
    {
      onRequest: deps.answerGuard,
      schema: {
        summary: "answer a consent request (approve once / session / for a while, approve with changes, deny)",
        description:
          "The first answer wins; the waiting call receives it as a signed, verified consent response. Takes the " +
          "approvers' token only: the agents' token is refused with 403 approver_token_required.",
        tags: ["consent"],
        security: [{ approver: [] }],
        params: CONSENT_ID_PARAMS,
        body: CONSENT_RESPONSE_BODY,
        response: {
          200: CONSENT_VIEW_ANSWER,
          403: {
            ...ERROR_BODY_SCHEMA,
            "x-response-description":
              "approver_token_required: the agents' token cannot answer; approver_mismatch: approver_id names " +
              "another approver than the token's, or the unnamed token names a named approver",
          },
          404: ERROR_BODY_SCHEMA,
          409: ERROR_BODY_SCHEMA,
          410: ERROR_BODY_SCHEMA,
          ...ERROR_RESPONSES,
        },
      },
      serializerCompiler: serializeWithJson,
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const body = request.body as ConsentAnswerInput & { approver_id?: string };
      // recorded in the signed response and the audit, and shown in denials: printable only, as a webhook's
      requirePrintableField("approver_id", body.approver_id, "it is recorded and shown as the approver");
      // a token that names its approver answers as that approver; the body may repeat the name, not give another
      const named = callerApprover(request);
      if (named !== undefined && body.approver_id !== undefined && body.approver_id !== named) {
        throw new HttpError(
          403,
          "approver_mismatch",
          `this token belongs to approver \`${named}\`; the answer names \`${body.approver_id.slice(0, 100)}\` ` +
            "(leave approver_id out, or name the token's own)",
        );
      }
      // `api:NAME` of a named approver is that approver's token's alone: the unnamed token may not sign as it
      if (named === undefined && body.approver_id !== undefined && deps.approverNames?.has(body.approver_id) === true) {
        throw new HttpError(
          403,
          "approver_mismatch",
          `\`${body.approver_id}\` is a named approver (serve.approver_tokens): only its own token answers as ` +
            "it; leave approver_id out, or name another approver",
        );
      }
      const who = named ?? body.approver_id;
      const approver = who === undefined ? "api" : `api:${who}`;
      const view = await answerConsent(stores.pending, id, body, approver, clock());
      stores.changes.poke();
      return view;
    },
  );
  const complete = deps.complete;
  if (complete === undefined) return;
  app.post(
    "/v1/consent/:id/complete",
    {
      onRequest: deps.completeGuard,
      schema: {
        summary: "complete a consent request whose waiting call is gone (a node restarted)",
        description:
          "Waits until the request is answered (at most until it expires), then returns the signed, verified " +
          "consent response and records it in the audit chain. A request completes once across all nodes: " +
          "its nonce is spent; a second completion is refused with 409 consent_already_completed.",
        tags: ["consent"],
        security: [{ bearer: [] }],
        params: CONSENT_ID_PARAMS,
        response: {
          200: COMPLETED_CONSENT_ANSWER,
          403: {
            ...ERROR_BODY_SCHEMA,
            "x-response-description": "agent_mismatch: only the token that raised the request may complete it",
          },
          404: ERROR_BODY_SCHEMA,
          409: ERROR_BODY_SCHEMA,
          ...ERROR_RESPONSES,
        },
      },
      serializerCompiler: serializeWithJson,
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      // a request raised with a token that names its agent completes only with that token, and one raised
      // with the anonymous agents' token only with that one: completing takes the approval (the nonce is spent
      // once), and the agent's own waiting call would then fail
      const caller = callerAgent(request);
      const row = await stores.pending.get(id);
      // SQLite: an `acp proxy` of this home raised it (the row names its process): no token of this service
      // did, and the proxy's own waiting call completes it (or, the proxy gone, nobody)
      if (row?.owner != null) {
        throw new HttpError(
          403,
          "agent_mismatch",
          `consent request \`${id}\` was raised by an acp proxy of this home, not with a token of this service: ` +
            "the proxy's own waiting call completes it",
        );
      }
      const owner = row === null ? undefined : namedOwner(row);
      if (row !== null && owner !== caller) {
        const raised =
          owner === undefined
            ? "with the anonymous agents' token"
            : owner === ""
              ? "with a named agent's token"
              : `by agent \`${owner}\``;
        const token = caller === undefined ? "the anonymous agents' token" : `agent \`${caller}\`'s token`;
        throw new HttpError(
          403,
          "agent_mismatch",
          `consent request \`${id}\` was raised ${raised}: ${token} cannot complete it`,
        );
      }
      const gone = new AbortController();
      const onClose = (): void => gone.abort();
      reply.raw.once("close", onClose); // the client went away before the answer
      try {
        return await complete(id, gone.signal, caller);
      } finally {
        reply.raw.off("close", onClose);
      }
    },
  );
}
