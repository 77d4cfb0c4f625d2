/** `POST /mcp`: the tool over streamable HTTP, stateless (each request gets its own server and transport). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { DecisionService } from "../service/decision-service.js";
import { callerAgent } from "../http/api-auth.js";
import { errorBody } from "../http/error-body.js";
import { ERROR_RESPONSES } from "../http/schemas.js";
import { securityHeaders } from "../http/security-headers.js";
import { MCP_ANSWERS, MCP_BODY, serializeWithJson } from "../http/answer-schemas.js";
import { createPreToolCheckMcpServer } from "./pre-tool-check-tool.js";

/**
 * Registers `/mcp`. Every other method answers 405 (`Allow: POST`) after the token is checked: a stateless
 * endpoint keeps no stream and no session.
 */
export function registerMcpEndpoint(
  app: FastifyInstance,
  service: DecisionService,
  guard: (request: FastifyRequest, reply: FastifyReply) => Promise<void>,
  options: { readonly tls?: boolean; readonly log?: (line: string) => void } = {},
): void {
  // the SDK transport writes the answer itself (hijacked): the headers every answer has are set first
  const headers = Object.entries({ ...securityHeaders(options.tls === true), "cache-control": "no-store" });
  app.post(
    "/mcp",
    {
      onRequest: guard,
      schema: {
        summary: "MCP (streamable HTTP): the tool aana_pre_tool_check",
        description:
          "Stateless: send `accept: application/json, text/event-stream`; each POST is answered with JSON. " +
          "tools/call answers carry the decision envelope in structuredContent (read structuredContent.route).",
        tags: ["mcp"],
        security: [{ bearer: [] }],
        body: MCP_BODY,
        response: { ...ERROR_RESPONSES, ...MCP_ANSWERS },
      },
      // the schemas document: errors are written as JSON.stringify writes them (the SDK writes the rest)
      serializerCompiler: serializeWithJson,
      // the MCP SDK judges the message (and answers JSON-RPC errors); the schema documents it
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const server = createPreToolCheckMcpServer(service, callerAgent(request), options.log);
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true }); // no session id generator: stateless;
      reply.hijack();
      for (const [name, value] of headers) reply.raw.setHeader(name, value);
      reply.raw.once("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );
  // answered in onRequest, after the guard: the body is never read, whatever it is
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> =>
    reply
      .status(405)
      .header("allow", "POST")
      .send(errorBody("method_not_allowed", "this MCP endpoint is stateless: POST only"));
  // every other method is answered here, after the token (so not by the app's 405 before it): an MCP
  // client probes /mcp with GET, DELETE or OPTIONS, and a caller without the token learns nothing but 401
  app.route({
    method: ["GET", "DELETE", "PUT", "PATCH", "OPTIONS"],
    url: "/mcp",
    onRequest: [guard, notAllowed],
    schema: { hide: true },
    handler: () => undefined,
  });
}
