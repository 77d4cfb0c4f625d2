/** `POST /v1/decide`: a full action request through the one pipeline; `?wait=true` waits for a person. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DecisionService } from "../../service/decision-service.js";
import { callerAgent } from "../api-auth.js";
import {
  ACTION_REQUEST_BODY,
  AGENT_REFUSED_RESPONSE,
  DECIDE_QUERY,
  ERROR_RESPONSES,
  withRetryAfter,
} from "../schemas.js";
import { ERROR_BODY_SCHEMA } from "../error-body.js";
import { DECIDE_ANSWER, serializeWithJson } from "../answer-schemas.js";
import { decisionRetryAfter } from "../retry-after.js";

/**
 * Registers the route. A waiting call is withdrawn when the client disconnects. A call refused only until a
 * rule's rate limit frees a slot, or until the caller's share of the policy work comes back, is answered
 * with `Retry-After` (the answer stays 200 with `route: refuse`, as documented).
 */
export function registerDecide(
  app: FastifyInstance,
  service: DecisionService,
  guard: (request: FastifyRequest, reply: FastifyReply) => Promise<void>,
): void {
  app.post(
    "/v1/decide",
    {
      onRequest: guard,
      schema: {
        summary: "decide an action request (accept / ask / defer / refuse)",
        description:
          "Runs the request through every configured source (policy rules, consent graph, action contract). " +
          "With wait=true an ask or defer becomes a consent request and the call returns when a person answers " +
          "(route accept with the arguments to run, or refuse).",
        tags: ["decisions"],
        security: [{ bearer: [] }],
        body: ACTION_REQUEST_BODY,
        querystring: DECIDE_QUERY,
        response: {
          200: withRetryAfter(
            DECIDE_ANSWER,
            "on a refusal only waiting lifts (every refusing source refused for a spent rate_limit or the caller's " +
              "spent share, caller_budget_exhausted): when asking again could be answered otherwise",
          ),
          429: withRetryAfter(
            { ...ERROR_BODY_SCHEMA, "x-response-description": "consent_queue_full: too many consent requests wait" },
            "1 when the request found no turn to be counted in time; none when the queue is full",
          ),
          403: AGENT_REFUSED_RESPONSE,
          ...ERROR_RESPONSES,
        },
      },
      serializerCompiler: serializeWithJson,
    },
    async (request, reply) => {
      const query = request.query as { wait?: string; session?: string };
      const caller = callerAgent(request);
      const withdraw = new AbortController();
      const onClose = (): void => {
        if (!request.raw.complete || request.raw.socket.destroyed) withdraw.abort();
      };
      request.raw.socket.once("close", onClose);
      try {
        const answer = await service.decide(request.body, {
          wait: query.wait === "true",
          ...(query.session !== undefined ? { sessionId: query.session } : {}),
          ...(caller !== undefined ? { caller } : {}),
          signal: withdraw.signal,
        });
        // a person's answer (`consent`) is final: only the pipeline's own refusal may pass with time
        const retryAfter =
          answer.consent === undefined ? decisionRetryAfter(answer.decision, service.options.clock()) : undefined;
        if (retryAfter !== undefined) void reply.header("retry-after", retryAfter);
        return answer;
      } finally {
        request.raw.socket.off("close", onClose);
      }
    },
  );
}
