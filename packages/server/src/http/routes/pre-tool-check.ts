/** `POST /pre-tool-check`: an Agent Action Contract v1 event in, the decision envelope out. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DecisionService } from "../../service/decision-service.js";
import { errorBody, ERROR_BODY_SCHEMA } from "../error-body.js";
import { CONTRACT_EVENT_BODY } from "../schemas.js";

function serializeJson(data: unknown): string {
  return JSON.stringify(data);
}

/**
 * Registers the route. The body is checked by the contract's own validator (built on the same JSON
 * schema the OpenAPI document shows), so an invalid event gets the contract's refuse envelope, with
 * its `validation_errors`, under a 400 status: both a status-reading and an envelope-reading client
 * fail closed.
 */
export function registerPreToolCheck(
  app: FastifyInstance,
  service: DecisionService,
  guard: (request: FastifyRequest, reply: FastifyReply) => Promise<void>,
): void {
  app.post(
    "/pre-tool-check",
    {
      preHandler: guard,
      // the contract validator judges the body (it words its errors for the envelope)
      validatorCompiler: () => () => true,
      // the envelope is plain JSON built by the service: one JSON.stringify, not a schema-driven
      // serializer walking `additionalProperties` key by key (the schema stays for the OpenAPI document)
      serializerCompiler: () => serializeJson,
      schema: {
        summary: "check an Agent Action Contract v1 event before the tool runs",
        description:
          "Returns the decision envelope. Execute the tool only when gate_decision is pass and " +
          "architecture_decision.route is accept with no hard blockers. Invalid events get a refuse envelope and status 400.",
        tags: ["decisions"],
        security: [{ bearer: [] }],
        body: CONTRACT_EVENT_BODY,
        response: {
          200: { description: "the decision envelope", type: "object", additionalProperties: true },
          400: {
            description: "an invalid event: the refuse envelope plus `error`",
            type: "object",
            additionalProperties: true,
          },
          401: ERROR_BODY_SCHEMA,
        },
      },
    },
    async (request, reply) => {
      const { valid, envelope } = await service.preToolCheck(request.body, "pre_tool_check");
      if (valid) return envelope;
      const first = envelope.validation_errors[0];
      const message = first === undefined ? "invalid event" : `invalid event: ${first.message}`;
      return reply.status(400).send({ ...envelope, ...errorBody("invalid_event", message) });
    },
  );
}
