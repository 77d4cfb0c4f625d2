/** `GET /v1/audit` (paged, filtered, newest first) and `GET /v1/audit/verify` (the chain's status). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AuditCheckpointSummary, AuditConsentCount, AuditRemainder, AuditVerification } from "@acp/core";
import type { AuditQuery, AuditTrail } from "../../store/types.js";
import { callerAgent, readsAsAgentsToken } from "../api-auth.js";
import { HttpError } from "../error-body.js";
import { AUDIT_QUERY, ERROR_RESPONSES, READ_SECURITY } from "../schemas.js";
import { AUDIT_PAGE_ANSWER, AUDIT_VERIFY_ANSWER, serializeWithJson } from "../answer-schemas.js";

/** Most events on one page. */
export const MAX_AUDIT_PAGE = 500;

type RawQuery = Partial<
  Record<"limit" | "before" | "event_type" | "tool" | "agent" | "decision" | "request_id" | "q", string>
>;

/** Turns the checked query string into an audit query (limit 1..500, default 50). */
export function toAuditQuery(raw: RawQuery): AuditQuery {
  const limit = raw.limit === undefined ? 50 : Number(raw.limit);
  if (limit < 1 || limit > MAX_AUDIT_PAGE) {
    throw new HttpError(400, "invalid_query", `querystring/limit: must be between 1 and ${MAX_AUDIT_PAGE}`);
  }
  return {
    limit,
    ...(raw.before !== undefined ? { before: Number(raw.before) } : {}),
    ...(raw.event_type !== undefined ? { eventType: raw.event_type } : {}),
    ...(raw.tool !== undefined ? { tool: raw.tool } : {}),
    ...(raw.agent !== undefined ? { agent: raw.agent } : {}),
    ...(raw.decision !== undefined ? { decision: raw.decision } : {}),
    ...(raw.request_id !== undefined ? { requestId: raw.request_id } : {}),
    ...(raw.q !== undefined ? { q: raw.q } : {}),
  };
}

/**
 * What a reader may list of the trail. Its consent events carry each call's arguments, its decisions what each
 * agent did: an approvers' token (and an open loopback API with no token configured) lists every event; a
 * token that names its agent only the events recorded under that name (every request made with it is, whatever
 * its body says: a query naming another agent is 403 `agent_mismatch`); the unnamed agents' token none (403
 * `approver_token_required`), as every caller that holds it shares it and its events name whatever agent
 * their bodies said, so none of them are its own to tell apart.
 */
export function scopeAuditQuery(request: FastifyRequest, query: AuditQuery): AuditQuery {
  const agent = callerAgent(request);
  if (agent !== undefined) {
    if (query.agent !== undefined && query.agent !== agent) {
      throw new HttpError(
        403,
        "agent_mismatch",
        `this token is agent \`${agent}\`'s: it reads only the audit events recorded under that name`,
      );
    }
    return { ...query, agent };
  }
  if (readsAsAgentsToken(request)) {
    throw new HttpError(
      403,
      "approver_token_required",
      "the audit trail holds every agent's calls and arguments: read it with the approvers' token " +
        "(ACP_APPROVER_TOKEN), or a token that names its agent (serve.agent_tokens) for that agent's own events",
    );
  }
  return query;
}

/** A checkpoint as the verifier saw it, on the wire. */
function viewCheckpoint(c: AuditCheckpointSummary | null): Record<string, unknown> | null {
  return c === null ? null : { line: c.line, count: c.count, head_hash: c.headHash, timestamp: c.timestamp };
}

/**
 * What the verifier told of the lines after the first problem ({@link AuditRemainder}), on the wire: the
 * same verification `acp audit verify` reports (its `afterProblem`), in the API's snake_case.
 */
function viewRemainder(after: AuditRemainder | null): Record<string, unknown> | null {
  if (after === null) return null;
  return {
    lines: after.lines,
    linked: after.linked,
    checkpoints: after.checkpoints,
    signed_checkpoints: after.signedCheckpoints,
    last_signed_checkpoint: viewCheckpoint(after.lastSignedCheckpoint),
    complete: after.complete,
    anchor: after.anchor === null ? null : { expected_line: after.anchor.expectedLine, line: after.anchor.line },
  };
}

/**
 * The consent responses the verifier checked with the public key, and each it could not, with its line and
 * why ({@link AuditConsentCount}): `acp audit verify --json`'s `consentResponses`, in the API's snake_case.
 * The count is the whole chain's, also when the verification was continued (`continuedVerification`).
 */
function viewConsentResponses(c: AuditConsentCount | null): Record<string, unknown> | null {
  if (c === null) return null;
  return {
    checked: c.checked,
    unchecked: c.unchecked,
    not_checkable: c.notCheckable.map((u) => ({
      line: u.line,
      why: u.why,
      ...(u.signatureChecked === true ? { signature_checked: true } : {}),
    })),
  };
}

/**
 * The wire form of a verification: every field of the verifier's result (`acp audit verify --json`'s),
 * the first problem and what could still be told of the lines after it (`after_problem`).
 */
export function viewVerification(v: AuditVerification): Record<string, unknown> {
  return {
    // `valid` is the verdict key of every verifying command's --json (acp audit verify, policy validate,
    // graph lint, …); `ok`, the same value, is what this route said before it
    valid: v.ok,
    ok: v.ok,
    count: v.count,
    head: v.head,
    checkpoints: v.checkpoints,
    last_checkpoint: viewCheckpoint(v.lastCheckpoint),
    events_after_last_checkpoint: v.eventsAfterLastCheckpoint,
    signatures_checked: v.signaturesChecked,
    consent_responses: viewConsentResponses(v.consentResponses),
    problem: v.problem,
    after_problem: viewRemainder(v.afterProblem),
  };
}

/** Registers the audit routes. */
export function registerAuditRoutes(
  app: FastifyInstance,
  audit: AuditTrail,
  guard: (request: FastifyRequest, reply: FastifyReply) => Promise<void>,
): void {
  app.get(
    "/v1/audit",
    {
      onRequest: guard,
      schema: {
        summary: "audit events, newest first, filtered and paged",
        description:
          "The approvers' tokens read every event; a token that names its agent only the events recorded under " +
          "that name (403 `agent_mismatch` for `?agent=` another); the unnamed agents' token none (403 " +
          "`approver_token_required`): consent events carry each call's arguments.",
        tags: ["audit"],
        security: READ_SECURITY,
        querystring: AUDIT_QUERY,
        response: { 200: AUDIT_PAGE_ANSWER, ...ERROR_RESPONSES },
      },
      serializerCompiler: serializeWithJson,
    },
    async (request) => audit.list(scopeAuditQuery(request, toAuditQuery(request.query as RawQuery))),
  );
  app.get(
    "/v1/audit/verify",
    {
      onRequest: guard,
      schema: {
        summary: "verify the audit chain: ok, or the first broken event and what the lines after it tell",
        tags: ["audit"],
        security: READ_SECURITY,
        response: { 200: AUDIT_VERIFY_ANSWER, ...ERROR_RESPONSES },
      },
      serializerCompiler: serializeWithJson,
    },
    async () => viewVerification(await audit.verify()),
  );
}
