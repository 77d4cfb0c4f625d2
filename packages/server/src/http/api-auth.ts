/**
 * Who may call the API, by what the route does:
 *
 * - the agents' bearer token (`ACP_BRIDGE_TOKEN` or `serve.bearer_token`) asks for decisions
 *   (`/pre-tool-check`, `/v1/decide`, `/mcp`) and completes its own consent requests;
 * - the approvers' token (`ACP_APPROVER_TOKEN` or `serve.approver_token`) is the only one that answers
 *   consent over the API: an agent that holds the token it asks with must not be able to approve what
 *   it asked (the confused deputy ACP exists to stop);
 * - either reads (consent requests, their event stream, the audit trail); an agents' token reads only
 *   the consent requests raised with it ({@link readsAsAgentsToken}, {@link callerAgent}), and of the audit
 *   trail a named agent's token only its own events, the unnamed agents' token none (routes/audit.ts);
 * - the metrics (every agent's activity, counted) are the operators': the approvers' tokens read them, an
 *   agents' token is 403 `approver_token_required` (role `operate`).
 *
 * Compared in constant time; 400 for a malformed header, 401 for a missing or wrong token, 403 for the
 * agents' token where only the approvers' is taken. Without an agents' token the API answers loopback
 * callers only; answering consent over the API always needs the approvers' token.
 */
import { hash, randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { checkBearer, isLocalOrigin, isLoopbackHost } from "@acp/proxy";
import { HttpError } from "./error-body.js";

/** How the API authenticates. */
export interface ApiAuthOptions {
  /** The agents' bearer token; absent means none is configured (the API then answers loopback only). */
  readonly token?: string;
  /** The approvers' token, the only one that answers consent; absent: consent is answered elsewhere. */
  readonly approverToken?: string;
  /**
   * Agents' tokens that name their agent (`serve.agent_tokens`: name → token): each does what the agents'
   * token does, and a request made with it is that agent's ({@link callerAgent}).
   */
  readonly agentTokens?: ReadonlyMap<string, string>;
  /**
   * Approvers' tokens that name their approver (`serve.approver_tokens`: name → token): each does what the
   * approvers' token does, and an answer given with it is that approver's ({@link callerApprover}).
   */
  readonly approverTokens?: ReadonlyMap<string, string>;
  /** Whether the service listens on loopback only (then the `Host` header must name loopback). */
  readonly loopbackOnly: boolean;
  /** The public URL's `Host` (a reverse proxy in front): also taken by the loopback `Host` check. */
  readonly publicHost?: string;
  /** The public URL's origin (a reverse proxy in front): also taken by the loopback `Origin` check. */
  readonly publicOrigin?: string;
}

/** The agent a request's token names (set by the checks; absent for the agents' token and the approvers'). */
const agentOfRequest = new WeakMap<FastifyRequest, string>();
/** The approver a request's token names (set by the checks; absent for the unnamed approvers' token). */
const approverOfRequest = new WeakMap<FastifyRequest, string>();

/** Reads made with the unnamed agents' token (set by the `read` check). */
const readByAgentsToken = new WeakSet<FastifyRequest>();

/**
 * Whether a read was made with the unnamed agents' token (not an approvers' token, nor an open loopback API):
 * such a reader sees only the consent requests raised with that token.
 */
export function readsAsAgentsToken(request: FastifyRequest): boolean {
  return readByAgentsToken.has(request);
}

/** The agent the request's bearer token names (`serve.agent_tokens`), if it does. */
export function callerAgent(request: FastifyRequest): string | undefined {
  return agentOfRequest.get(request);
}

/** The approver the request's bearer token names (`serve.approver_tokens`), if it does. */
export function callerApprover(request: FastifyRequest): string | undefined {
  return approverOfRequest.get(request);
}

/**
 * The named agents' tokens by the SHA-256 of each (hex), to find the one a header carries with one hash and
 * a map lookup (the lookup's timing depends on the digest of what was sent, never on a token).
 */
function namedTokenDigests(tokens: ReadonlyMap<string, string> | undefined): ReadonlyMap<string, string> {
  const byDigest = new Map<string, string>();
  for (const [name, token] of tokens ?? []) byDigest.set(hash("sha256", token, "hex"), name);
  return byDigest;
}

/**
 * Whose named token the header carries (an agent's or an approver's, by `byDigest`), or undefined;
 * remembered in `names` for {@link callerAgent} / {@link callerApprover}.
 */
function namedCaller(
  request: FastifyRequest,
  byDigest: ReadonlyMap<string, string>,
  names: WeakMap<FastifyRequest, string>,
): string | undefined {
  if (byDigest.size === 0) return undefined;
  const header = request.headers.authorization;
  // the scheme name in any case (RFC 9110 §11.1), as checkBearer takes it for the unnamed tokens
  if (typeof header !== "string" || header.slice(0, 7).toLowerCase() !== "bearer ") return undefined;
  const name = byDigest.get(hash("sha256", header.slice(7), "hex"));
  if (name !== undefined) names.set(request, name);
  return name;
}

/** The last `Host` header found to name loopback (a client sends the same one on every request). */
let lastLoopbackHost: string | undefined;

/**
 * Checks the `Host` and `Origin` headers of a loopback-only listener (a DNS-rebinding and cross-site guard,
 * the one `acp proxy --http` applies): `Host` a loopback name, or the public URL's host when a reverse proxy
 * in front forwards it (else 421 `host_not_allowed`); `Origin` absent (a program), a loopback origin (a
 * local page) or the public URL's origin (else 403 `origin_not_allowed`: a page of another site, or an
 * opaque `null` one, whatever `Host` its browser was made to send).
 */
export function checkHost(request: FastifyRequest, options: ApiAuthOptions): void {
  if (!options.loopbackOnly) return;
  const { host, origin } = request.headers;
  if (host === undefined || (host !== lastLoopbackHost && host !== options.publicHost)) {
    if (!isLoopbackHost(host)) {
      throw new HttpError(
        421,
        "host_not_allowed",
        options.publicHost === undefined
          ? "this service answers only requests addressed to a loopback host (behind a reverse proxy: set --public-url)"
          : `this service answers only requests addressed to a loopback host or ${options.publicHost}`,
      );
    }
    lastLoopbackHost = host;
  }
  if (origin !== undefined && !isLocalOrigin(origin, options.publicOrigin)) {
    throw new HttpError(
      403,
      "origin_not_allowed",
      options.publicOrigin === undefined
        ? "this service answers only requests from loopback pages or programs (behind a reverse proxy: set --public-url)"
        : `this service answers only requests from loopback pages, programs or ${options.publicOrigin}`,
    );
  }
}

const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * Whether two SHA-256 hex digests are equal, in constant time: every one of the 64 digits is compared,
 * whatever differs first (the comparison `timingSafeEqual` makes, on the hex text; a string digest is
 * half the cost of a Buffer one).
 */
function sameDigest(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < 64; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The right token, found with one SHA-256 of the header's token against the configured token's digest
 * (computed once) and a constant-time comparison; false when it is not that, and `checkBearer` then
 * words the answer (400 malformed, 401 missing or wrong). The same verdicts as `checkBearer` alone.
 * One-shot `crypto.hash` to hex: no Hash object and no Buffer per request.
 */
function bearerFastPath(token: string): (header: string | string[] | undefined) => boolean {
  if (!TOKEN68.test(token)) return () => false;
  const wanted = hash("sha256", token, "hex");
  return (header) =>
    typeof header === "string" &&
    header.startsWith("Bearer ") &&
    sameDigest(hash("sha256", header.slice(7), "hex"), wanted);
}

/**
 * What a route lets its caller do, and so which tokens it takes: `agent` asks for decisions (the agents'
 * token, when one is configured); `complete` finishes an agent's own consent request (the agents' token,
 * always required); `read` reads (either token; open on loopback when no agents' token is configured);
 * `operate` reads what tells every agent's activity, the metrics (the approvers' tokens only; open on
 * loopback when no agents' token is configured, as `read`); `answer` answers consent (the approvers' token
 * only, always required).
 */
export type ApiRole = "agent" | "complete" | "read" | "operate" | "answer";

/** The error for a header that is no configured token of the role: `checkBearer`'s wording (400, 401). */
function refusal(request: FastifyRequest, token: string): HttpError | null {
  const verdict = checkBearer(request.headers.authorization, token);
  if (verdict.ok) return null;
  const code =
    verdict.status === 400
      ? "auth_header_malformed"
      : request.headers.authorization === undefined
        ? "auth_token_missing"
        : "auth_token_wrong";
  return new HttpError(verdict.status, code, verdict.message);
}

/**
 * Checks the `Host` header and the token `role` takes; throws the {@link HttpError} of the answer (421,
 * 400, 401, 403). Synchronous, for a route that checks inside its handler.
 */
export function createBearerCheck(options: ApiAuthOptions, role: ApiRole = "agent"): (request: FastifyRequest) => void {
  const { token, approverToken } = options;
  const named = namedTokenDigests(options.agentTokens);
  const namedApprovers = namedTokenDigests(options.approverTokens);
  const namedAgent = (request: FastifyRequest): string | undefined => namedCaller(request, named, agentOfRequest);
  const namedApprover = (request: FastifyRequest): string | undefined =>
    namedCaller(request, namedApprovers, approverOfRequest);
  // the answer to a token the route does not take, worded by checkBearer against the anonymous agents' token or,
  // without one, a random one nobody holds (never against a token another role takes: that would let it in)
  const nobody = randomBytes(32).toString("hex");
  const unheld = token ?? nobody;
  // without an anonymous agents' token, named ones still close the API to callers without a token
  const agentsHaveToken = token !== undefined || named.size > 0;
  const isAgent = token === undefined ? () => false : bearerFastPath(token);
  const isApprover = approverToken === undefined ? () => false : bearerFastPath(approverToken);
  if (role === "answer") {
    return (request) => {
      checkHost(request, options);
      if (approverToken === undefined && namedApprovers.size === 0) {
        throw new HttpError(
          401,
          "consent_api_token_required",
          "answering consent over the API needs the approvers' token: set ACP_APPROVER_TOKEN or " +
            "serve.approver_token (a token of its own, not the agents' ACP_BRIDGE_TOKEN); meanwhile answer " +
            "in the console or with acp approve / acp deny",
        );
      }
      const header = request.headers.authorization;
      if (isApprover(header) || namedApprover(request) !== undefined) return;
      if (isAgent(header) || (token !== undefined && checkBearer(header, token).ok) || namedAgent(request)) {
        throw new HttpError(
          403,
          "approver_token_required",
          "this is the agents' token: it asks for decisions and cannot answer them (an agent must not " +
            "approve its own requests); answer with the approvers' token (ACP_APPROVER_TOKEN)",
        );
      }
      const refused = refusal(request, approverToken ?? nobody);
      if (refused !== null) throw refused;
    };
  }
  const refuse = (request: FastifyRequest): void => {
    const refused = refusal(request, unheld);
    if (refused !== null) throw refused;
  };
  if (role === "operate") {
    return (request) => {
      checkHost(request, options);
      if (!agentsHaveToken) return;
      const header = request.headers.authorization;
      if (isApprover(header) || namedApprover(request) !== undefined) return;
      if (approverToken !== undefined && checkBearer(header, approverToken).ok) return;
      if (isAgent(header) || (token !== undefined && checkBearer(header, token).ok) || namedAgent(request)) {
        throw new HttpError(
          403,
          "approver_token_required",
          "the metrics count every agent's decisions and consent requests: read them with the approvers' token " +
            "(ACP_APPROVER_TOKEN or serve.approver_token), not an agents' token",
        );
      }
      refuse(request);
    };
  }
  if (role === "read") {
    return (request) => {
      checkHost(request, options);
      if (!agentsHaveToken) return;
      const header = request.headers.authorization;
      if (isApprover(header)) return;
      if (isAgent(header)) {
        readByAgentsToken.add(request);
        return;
      }
      if (approverToken !== undefined && checkBearer(header, approverToken).ok) return;
      if (namedAgent(request) !== undefined || namedApprover(request) !== undefined) return;
      refuse(request);
      // not refused: the agents' token, sent in a form the fast path does not take (`bearer`, spaces)
      readByAgentsToken.add(request);
    };
  }
  return (request) => {
    checkHost(request, options);
    if (!agentsHaveToken) {
      if (role === "agent") return;
      throw new HttpError(
        401,
        "consent_api_token_required",
        "completing a consent request over the API needs the agents' bearer token: set ACP_BRIDGE_TOKEN or serve.bearer_token",
      );
    }
    if (isAgent(request.headers.authorization)) return;
    if (namedAgent(request) !== undefined) return;
    refuse(request);
  };
}

/**
 * An `onRequest` hook that checks the `Host` header and the bearer token (when one is configured):
 * {@link createBearerCheck} as a hook, run before the body is read, so a caller without the token gets
 * 401 (or 403) and never a parse or validation error about its body.
 */
export function createBearerGuard(
  options: ApiAuthOptions,
  role: ApiRole = "agent",
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const check = createBearerCheck(options, role);
  // eslint-disable-next-line @typescript-eslint/require-await -- fastify treats an async hook's throw as the error answer
  return async (request) => {
    check(request);
  };
}
