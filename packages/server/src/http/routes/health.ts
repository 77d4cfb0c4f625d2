/** `GET /healthz` (the process answers), `GET /readyz` (its stores answer), `GET /metrics` (Prometheus text). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ServerMetrics } from "../../metrics/metrics.js";
import type { ServerStores } from "../../store/types.js";
import { ERROR_BODY_SCHEMA, errorBody } from "../error-body.js";
import { ERROR_RESPONSES, withRetryAfter } from "../schemas.js";
import { serializeWithJson, STATUS_ANSWER, TEXT_ANSWER } from "../answer-schemas.js";

/** Registers the probes and the metrics. */
export function registerHealthRoutes(
  app: FastifyInstance,
  deps: {
    readonly stores: ServerStores;
    readonly metrics: ServerMetrics;
    readonly clock: () => Date;
    /** The metrics' guard: the approvers' tokens (role `operate`), since they count every agent's activity. */
    readonly guard: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** A failed audit write that stopped decisions, or null. */
    readonly auditFailure?: () => unknown;
    /** True once the service is stopping (SIGINT, SIGTERM): not ready, whatever the stores say. */
    readonly stopping?: () => boolean;
  },
): void {
  app.get(
    "/healthz",
    {
      schema: { summary: "liveness", tags: ["operations"], response: { 200: STATUS_ANSWER("ok") } },
      serializerCompiler: serializeWithJson,
    },
    () => ({ status: "ok" }),
  );
  app.get(
    "/readyz",
    {
      schema: {
        summary: "readiness: the stores answer and the service is not stopping",
        tags: ["operations"],
        response: {
          200: STATUS_ANSWER("ready"),
          503: withRetryAfter(
            { ...ERROR_BODY_SCHEMA, "x-response-description": "not ready: not_ready or audit_unavailable" },
            "1 on PostgreSQL, which the node reconnects to by itself; none when the node is stopping or a " +
              "state.db or audit.jsonl problem needs a person",
          ),
        },
      },
      serializerCompiler: serializeWithJson,
    },
    async (_r, reply) => {
      if (deps.stopping?.() === true) {
        return reply
          .status(503)
          .send(
            errorBody("not_ready", "the service is stopping: send requests to another node, or wait for its restart"),
          );
      }
      if ((deps.auditFailure?.() ?? null) !== null) {
        // what brings it back differs: PostgreSQL's chain recovers when the database answers, the file's at a restart
        const recovers =
          deps.stores.recoverAudit !== undefined
            ? "it resumes by itself once the database answers again"
            : "fix the cause (disk full, audit.jsonl moved or replaced) and restart the service";
        // PostgreSQL's chain comes back by itself (it is retried every 500 ms): then say when to look again
        if (deps.stores.recoverAudit !== undefined) void reply.header("retry-after", "1");
        return reply
          .status(503)
          .send(
            errorBody(
              "audit_unavailable",
              `an audit write failed, so every decision is refused: ${recovers} (the cause is in the service log)`,
            ),
          );
      }
      if (await deps.stores.ready()) return { status: "ready" };
      const what =
        deps.stores.kind === "postgres"
          ? "PostgreSQL does not answer (or this node's clock is more than 2 s from the database's: set it), so every decision is refused: it resumes by itself once the database answers again"
          : "state.db does not answer, so every decision is refused: check the disk and $ACP_HOME, then restart the service";
      // PostgreSQL comes back by itself: say when to look again; a state.db that does not answer needs a person
      if (deps.stores.kind === "postgres") void reply.header("retry-after", "1");
      return reply.status(503).send(errorBody("not_ready", `${what} (the cause is in the service log)`));
    },
  );
  app.get(
    "/metrics",
    {
      onRequest: deps.guard,
      schema: {
        summary: "Prometheus metrics",
        description:
          "The approvers' tokens read them (and loopback with no agents' token configured): they count every " +
          "agent's decisions and consent requests, so an agents' token is 403 `approver_token_required`.",
        tags: ["operations"],
        security: [{ approver: [] }],
        response: {
          200: TEXT_ANSWER("text/plain", "Prometheus text format 0.0.4"),
          ...ERROR_RESPONSES,
        },
      },
    },
    async (_request, reply) => {
      let pending = 0;
      try {
        // counted by id: a scrape reads no request whole
        pending = (await deps.stores.pending.listPendingIds(deps.clock().getTime())).length;
      } catch {
        pending = -1;
      }
      return reply.type("text/plain; version=0.0.4; charset=utf-8").send(deps.metrics.render(pending));
    },
  );
}
