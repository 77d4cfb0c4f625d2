/** `POST /pre-tool-check`: an Agent Action Contract v1 event in, the decision envelope out. */
import { callerAgent } from "../api-auth.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fastJson from "fast-json-stringify";
import type { DecisionService } from "../../service/decision-service.js";
import type { ServerMetrics } from "../../metrics/metrics.js";
import type { ContractEnvelope } from "@acp/core";
import type { PreToolCheckEnvelope } from "../../service/merge-envelope.js";
import { PRE_TOOL_CHECK_ANSWER } from "../envelope-schema.js";
import { errorBody, ERROR_BODY_SCHEMA } from "../error-body.js";
import { AGENT_REFUSED_RESPONSE, CONTRACT_EVENT_BODY, UNAVAILABLE_RESPONSE, withRetryAfter } from "../schemas.js";
import { jsonAnswerHeaders } from "../security-headers.js";
import { retryAfterSeconds } from "../retry-after.js";

function serializeJson(data: unknown): string {
  return JSON.stringify(data);
}

/**
 * The 200 answer's serializer, compiled once from the schema the OpenAPI document shows: the same text
 * as `JSON.stringify` for every envelope the service builds (properties in the order they are built),
 * about half its cost for the 1.1 KB envelope (no generic walk of every key).
 */
export const serializeAnswer: (envelope: unknown) => string = fastJson(
  PRE_TOOL_CHECK_ANSWER as unknown as Parameters<typeof fastJson>[0],
);

/**
 * The 200 answer written straight to the socket: the envelope is plain JSON built by the service, and
 * the headers are the ones every answer gets (security headers, `cache-control`, JSON content type,
 * prebuilt), so Fastify's send path (content-type parsing, serialisation and onSend hooks) is skipped.
 */
function sendEnvelope(
  reply: FastifyReply,
  envelope: PreToolCheckEnvelope | ContractEnvelope,
  headers: readonly string[],
  retryAfter: string | undefined,
): void {
  const body = serializeAnswer(envelope);
  void reply.hijack();
  const res = reply.raw;
  const length = ["content-length", String(Buffer.byteLength(body))];
  res.writeHead(
    200,
    retryAfter === undefined ? [...headers, ...length] : [...headers, "retry-after", retryAfter, ...length],
  );
  res.end(body);
}

/** An error before the answer went out takes the one error mapping; after it, the connection is closed. */
function failed(reply: FastifyReply, err: unknown): void {
  if (reply.sent) reply.raw.destroy();
  else void reply.send(err instanceof Error ? err : new Error(String(err)));
}

/** The answer of an invalid event: the contract's refuse envelope plus `error`, status 400. */
function sendInvalid(
  reply: FastifyReply,
  envelope: PreToolCheckEnvelope | ContractEnvelope,
  metrics: ServerMetrics,
): void {
  metrics.countError(400, "invalid_event");
  const first = envelope.validation_errors[0];
  const message = first === undefined ? "invalid event" : `invalid event: ${first.message}`;
  void reply.status(400).send({ ...envelope, ...errorBody("invalid_event", message) });
}

/**
 * Registers the route. The body is checked by the contract's own validator (built on the same JSON
 * schema the OpenAPI document shows), so an invalid event gets the contract's refuse envelope, with
 * its `validation_errors`, under a 400 status: both a status-reading and an envelope-reading client
 * fail closed. `check` (the `Host` and bearer checks) runs in a synchronous `onRequest` hook, before the
 * body is read: a caller without the token gets 401, never an answer about its body; its error takes the
 * one error mapping. A refusal that waiting lifts (a spent rate limit or caller share) carries `Retry-After`.
 */
export function registerPreToolCheck(
  app: FastifyInstance,
  service: DecisionService,
  check: (request: FastifyRequest) => void,
  options: { readonly tls?: boolean } = {},
): void {
  const headers = jsonAnswerHeaders(options.tls === true);
  app.post(
    "/pre-tool-check",
    {
      onRequest: (request, _reply, done) => {
        try {
          check(request);
        } catch (err) {
          done(err as Error);
          return;
        }
        done();
      },
      // the contract validator judges the body (it words its errors for the envelope)
      validatorCompiler: () => () => true,
      // the 200 answer is written by sendEnvelope with the serializer compiled from its schema; the
      // 400 envelope is plain JSON: one JSON.stringify, not a serializer walking `additionalProperties`
      serializerCompiler: ({ httpStatus }) => (httpStatus === "200" ? serializeAnswer : serializeJson),
      schema: {
        summary: "check an Agent Action Contract v1 event before the tool runs",
        description:
          "Returns the decision envelope. Execute the tool only when gate_decision is pass and " +
          "architecture_decision.route is accept with no hard blockers. Invalid events get a refuse envelope and status 400.",
        tags: ["decisions"],
        security: [{ bearer: [] }],
        body: CONTRACT_EVENT_BODY,
        response: {
          200: withRetryAfter(
            PRE_TOOL_CHECK_ANSWER,
            "on a refusal only waiting lifts (a spent rate_limit or caller share, and the contract itself does not " +
              "refuse): when asking again could be answered otherwise",
          ),
          400: {
            description: "an invalid event: the refuse envelope plus `error`",
            type: "object",
            additionalProperties: true,
          },
          401: ERROR_BODY_SCHEMA,
          403: AGENT_REFUSED_RESPONSE,
          503: UNAVAILABLE_RESPONSE,
        },
      },
    },
    // not async: a rejection below reaches the error handler through `failed`
    (request, reply) => {
      service.preToolCheck(request.body, "pre_tool_check", callerAgent(request)).then(
        ({ valid, envelope, retryAtMs }) => {
          try {
            const retryAfter =
              retryAtMs === undefined ? undefined : retryAfterSeconds(retryAtMs, service.options.clock().getTime());
            if (valid) sendEnvelope(reply, envelope, headers, retryAfter);
            else sendInvalid(reply, envelope, service.options.metrics);
          } catch (err) {
            failed(reply, err);
          }
        },
        (err: unknown) => failed(reply, err),
      );
    },
  );
}
