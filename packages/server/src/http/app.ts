/**
 * The Fastify app: the API, the MCP endpoint, the console and the OpenAPI document, with the body
 * limit, content-type checks, closed schemas, security headers and the one error mapping.
 */
import Fastify, { type FastifyInstance } from "fastify";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { registerConsole, type ConsoleDeps } from "../console/routes.js";
import { registerMcpEndpoint } from "../mcp/http-endpoint.js";
import type { ServerMetrics } from "../metrics/metrics.js";
import type { CompletedConsent } from "../service/consent-completion.js";
import type { DecisionService } from "../service/decision-service.js";
import type { ServerStores } from "../store/types.js";
import { checkHost, createBearerCheck, createBearerGuard, type ApiAuthOptions } from "./api-auth.js";
import { HttpError } from "./error-body.js";
import { clientErrorHandler, frameworkErrorHandler, installErrorHandlers } from "./error-handler.js";
import { installJsonBodyParser } from "./json-body.js";
import { collectWrongMethods } from "./method-not-allowed.js";
import { declareAppWideResponses } from "./openapi-responses.js";
import { guardConnections, type ConnectionGuardOptions, type PublicUrl } from "@acp/proxy";
import { registerAuditRoutes } from "./routes/audit.js";
import { registerConsentRoutes } from "./routes/consent.js";
import { endConsentStreamsOnClose } from "./routes/consent-stream.js";
import { registerDecide } from "./routes/decide.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerPreToolCheck } from "./routes/pre-tool-check.js";
import { addSecurityHeaders } from "./security-headers.js";

/** The largest request body accepted: 1 MiB (the contract's own event limit). */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** How often Node cuts connections past the header (15 s) or request (30 s) timeout. */
const CONNECTIONS_CHECKING_INTERVAL_MS = 2000;

/** What the app is built from. */
export interface HttpAppOptions {
  readonly service: DecisionService;
  readonly stores: ServerStores;
  readonly metrics: ServerMetrics;
  readonly clock: () => Date;
  /** The simulator's decide: no audit, no rate-limit spending (`ConsoleDeps.simulate`). */
  readonly simulate: ConsoleDeps["simulate"];
  readonly auth: ApiAuthOptions;
  /** Key and certificate (PEM) to serve HTTPS; the console cookie is then `Secure`. */
  readonly tls?: { readonly key: string | Buffer; readonly cert: string | Buffer };
  /** The public URL when a reverse proxy is in front; an `https:` one counts as TLS for cookies and headers. */
  readonly publicUrl?: PublicUrl;
  readonly bodyLimit?: number;
  /** `POST /v1/consent/{id}/complete`: finish a request whose waiting call is gone (absent: no route). */
  readonly completeConsent?: (id: string, signal: AbortSignal, caller?: string) => Promise<CompletedConsent>;
  /** True once the service is stopping: `/readyz` then answers 503 so a load balancer sends no more. */
  readonly stopping?: () => boolean;
  /** Where internal errors are told (never to the client). Default: nowhere. */
  readonly log?: (line: string) => void;
  /**
   * Connections open at once (default 4,096) and what a client may leave unread (default 64 MiB a
   * connection, nothing read for 60 s): `guardConnections` of `@acp/proxy`.
   */
  readonly connections?: Partial<Omit<ConnectionGuardOptions, "log">>;
}

/** The only routes that take an HTML form (`application/x-www-form-urlencoded`). */
const FORM_ROUTES: ReadonlySet<string> = new Set(["/console/login", "/console/logout"]);

/** Connections the service keeps open at once, by default. */
export const DEFAULT_SERVE_MAX_CONNECTIONS = 4096;

/** Builds the app (not listening yet). */
export async function createHttpApp(options: HttpAppOptions): Promise<FastifyInstance> {
  // browsers reach the service over TLS: here, or at the reverse proxy of an https public URL
  const tls = options.tls !== undefined || options.publicUrl?.https === true;
  const app = Fastify({
    logger: false,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    requestTimeout: 30_000,
    return503OnClosing: true,
    forceCloseConnections: true,
    frameworkErrors: frameworkErrorHandler(options.metrics, tls),
    clientErrorHandler: clientErrorHandler(options.metrics, tls),
    // the header and body timeouts are enforced when Node checks the connections: every 2 s, not every 30 s
    http: { connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS },
    ...(options.tls !== undefined
      ? {
          https: {
            key: options.tls.key,
            cert: options.tls.cert,
            connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
          },
        }
      : {}),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false } },
  }) as unknown as FastifyInstance;
  app.server.headersTimeout = 15_000;
  // every request of a loopback listener, routed or not (the API, /mcp, the console, /docs, a 404): Host and
  // Origin first, so a page of another site learns nothing, not even which paths exist
  const auth: ApiAuthOptions =
    options.publicUrl === undefined
      ? options.auth
      : { publicHost: options.publicUrl.host, publicOrigin: options.publicUrl.origin, ...options.auth };
  // eslint-disable-next-line @typescript-eslint/require-await -- fastify treats an async hook's throw as the error answer
  app.addHook("onRequest", async (request) => checkHost(request, auth));
  // JSON everywhere; HTML forms only for the console's sign-in and sign-out. A form is what another site's
  // page can post without asking first (no CORS preflight): the console's JSON calls take JSON alone
  app.removeContentTypeParser("text/plain");
  installJsonBodyParser(app);
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: 16 * 1024 },
    (request, body, done) => {
      if (!FORM_ROUTES.has(request.routeOptions.url ?? "")) {
        done(
          new HttpError(415, "unsupported_media_type", "unsupported content type (send application/json)"),
          undefined,
        );
        return;
      }
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );
  addSecurityHeaders(app, { tls });
  endConsentStreamsOnClose(app);
  const stopGuard = guardConnections(app.server, {
    maxConnections: DEFAULT_SERVE_MAX_CONNECTIONS,
    ...options.connections,
    log: options.log ?? (() => undefined),
  });
  app.addHook("onClose", (_app, done) => {
    stopGuard();
    done();
  });
  installErrorHandlers(app, options.metrics, options.log ?? (() => undefined), options.clock);
  await app.register(swagger, {
    // every operation also declares the answers of the app-wide hooks (421, 403, 413, 415) and 500
    transform: declareAppWideResponses,
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "ACP decision service",
        version: "0.1.0",
        description:
          "Every action an agent proposes, routed accept / ask / defer / refuse. Guide: docs/guides/serve.md",
      },
      components: {
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            description: "the agents' token (ACP_BRIDGE_TOKEN): asks for decisions; reads",
          },
          approver: {
            type: "http",
            scheme: "bearer",
            description: "the approvers' token (ACP_APPROVER_TOKEN): the only one that answers consent; reads",
          },
        },
      },
    },
  });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    staticCSP: true,
    // the UI's own CSP, made no looser than the console's on framing, and with no third-party image host
    // (the UI's validator badge is off: validatorUrl null)
    transformStaticCSP: (header) =>
      header.replace(/frame-ancestors [^;]*/, "frame-ancestors 'none'").replace(" validator.swagger.io", ""),
  });
  // every route below is seen, so a documented path answers a method it does not take with 405, not 404
  const wrongMethods = collectWrongMethods(app, options.metrics);
  const agentGuard = createBearerGuard(auth, "agent");
  const readGuard = createBearerGuard(auth, "read");
  registerPreToolCheck(app, options.service, createBearerCheck(auth, "agent"), { tls });
  registerDecide(app, options.service, agentGuard);
  registerConsentRoutes(app, {
    stores: options.stores,
    clock: options.clock,
    guard: readGuard,
    answerGuard: createBearerGuard(auth, "answer"),
    completeGuard: createBearerGuard(auth, "complete"),
    tls,
    ...(auth.approverTokens !== undefined ? { approverNames: new Set(auth.approverTokens.keys()) } : {}),
    ...(options.completeConsent !== undefined ? { complete: options.completeConsent } : {}),
  });
  registerAuditRoutes(app, options.stores.audit, readGuard);
  registerHealthRoutes(app, {
    stores: options.stores,
    metrics: options.metrics,
    clock: options.clock,
    guard: createBearerGuard(auth, "operate"),
    auditFailure: () => options.service.auditFailure(),
    ...(options.stopping !== undefined ? { stopping: options.stopping } : {}),
  });
  registerMcpEndpoint(app, options.service, agentGuard, {
    tls,
    ...(options.log !== undefined ? { log: options.log } : {}),
  });
  registerConsole(app, {
    stores: options.stores,
    clock: options.clock,
    simulate: options.simulate,
    tls,
    auth,
    ...(options.publicUrl !== undefined ? { publicOrigin: options.publicUrl.origin } : {}),
  });
  app.get("/openapi.json", { schema: { hide: true } }, () => app.swagger());
  wrongMethods.answer();
  return app;
}
