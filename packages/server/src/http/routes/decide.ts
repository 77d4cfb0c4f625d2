/** `POST /v1/decide`: a full action request through the one pipeline; `?wait=true` waits for a person. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DecisionService } from "../../service/decision-service.js";
import { callerAgent } from "../api-auth.js";
import { ACTION_REQUEST_BODY, DECIDE_QUERY, ERROR_RESPONSES } from "../schemas.js";
import { DECIDE_ANSWER, serializeWithJson } from "../answer-schemas.js";

/** Registers the route. A waiting call is withdrawn when the client disconnects. */
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
        response: { 200: DECIDE_ANSWER, ...ERROR_RESPONSES },
      },
      serializerCompiler: serializeWithJson,
    },
    async (request) => {
      const query = request.query as { wait?: string; session?: string };
      const caller = callerAgent(request);
      const withdraw = new AbortController();
      const onClose = (): void => {
        if (!request.raw.complete || request.raw.socket.destroyed) withdraw.abort();
      };
      request.raw.socket.once("close", onClose);
      try {
        return await service.decide(request.body, {
          wait: query.wait === "true",
          ...(query.session !== undefined ? { sessionId: query.session } : {}),
          ...(caller !== undefined ? { caller } : {}),
          signal: withdraw.signal,
        });
      } finally {
        request.raw.socket.off("close", onClose);
      }
    },
  );
}
