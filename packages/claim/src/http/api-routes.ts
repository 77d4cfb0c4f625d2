import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { FAQ_LIMITS } from "../content/faq.js";
import { parseMetadata } from "../content/sandbox-metadata.js";
import { newAgentToken, newClaimCode, newExchangeCode, normalizeClaimCode } from "../ids/random-ids.js";
import { challengeDifficulty, issueChallenge, staleChallengeMessage, verifyChallenge } from "../pow/challenge.js";
import { POW_ALGORITHM } from "../pow/leading-zeros.js";
import type { SandboxRow } from "../store/claim-store.js";
import { checkDpopProof, DPOP_ALGORITHMS, verifyDpopProof } from "../secrets/dpop.js";
import { admissionDiscovery, decideAdmission } from "./admission-gate.js";
import { agentTokenHash, requestUrl, type ClaimRuntime } from "./context.js";
import { retryAfterSeconds } from "./failure.js";
import { invalid, registerFaqRoutes, type Handler, type Params } from "./faq-routes.js";

const HOUR = 3_600_000;
/** Agent tokens live at most 48 h (§20.1) and never longer than the sandbox. */
export const AGENT_TOKEN_TTL_MS = 48 * HOUR;
/** Claim codes live at most 1 h (§19.1). */
export const CLAIM_CODE_TTL_MS = HOUR;
/** Exchange codes live at most 10 min (§17.1). */
export const EXCHANGE_CODE_TTL_MS = 10 * 60_000;
/** Extensions: 24 h each, at most 2 (§28). */
export const EXTENSION_MS = 24 * HOUR;
export const MAX_EXTENSIONS = 2;

const iso = (ms: number): string => new Date(ms).toISOString();

/** What the API says to a body that is not JSON (`curl -d` sends a form, for one). */
export const API_BODY_MEDIA_TYPE_MESSAGE = "the request body must be JSON: send `content-type: application/json`";

/**
 * Why an API request's body is not one the protocol reads, or undefined: a body (any at all) must be a JSON object
 * sent as `application/json`. Checked before anything is looked up or spent, so the answer (415 or 400) says only
 * what is wrong with the request — a form-encoded creation used to reach admission, fail it and answer "not found".
 */
export function apiBodyProblem(req: FastifyRequest): { status: number; message: string } | undefined {
  if (req.body === undefined) return undefined;
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") return { status: 415, message: API_BODY_MEDIA_TYPE_MESSAGE };
  if (typeof req.body !== "object" || req.body === null || Array.isArray(req.body))
    return { status: 400, message: "the request body must be a JSON object" };
  return undefined;
}

/** Why a creation's DPoP proof was refused (400 `claim_invalid_dpop`), by {@link verifyDpopProof}'s reason. */
export const DPOP_REFUSED = {
  invalid: "the DPoP proof is not valid (typ, alg, public key, signature, htm, htu, iat or jti)",
  replayed:
    "the DPoP proof was already used: a proof is good for one request, a refused or failed one included; sign a new proof (a new jti) for every request, retries too",
} as const;

/** Registers the API origin's routes (discovery, admission, sandboxes, FAQs, publish, claim codes, preview). */
export function registerApiRoutes(app: FastifyInstance, rt: ClaimRuntime): void {
  const api = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, action: string, h: Handler): void => {
    app.route({
      method,
      url,
      handler: async (req, reply) => {
        const f = rt.facts(req);
        f.action = action;
        if (f.kind !== "api") return rt.fail(req, reply);
        const problem = apiBodyProblem(req);
        if (problem !== undefined) return invalid(reply, "claim_invalid_request", problem.message, problem.status);
        return h(req, reply);
      },
    });
  };
  /** The sandbox of the bearer token, live (active or published, within TTL); otherwise the failure. */
  const authed = (
    h: (s: SandboxRow, req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> | FastifyReply,
  ): Handler => {
    return async (req, reply) => {
      const m = /^(Bearer|DPoP) ([A-Za-z0-9_]{1,100})$/.exec(req.headers.authorization ?? "");
      const proof = req.headers["dpop"];
      // A DPoP-bound token is found only with a valid proof by its key; as a Bearer token it hashes differently.
      // The proof is spent (single use, across nodes) only once its token is found: a proof sent with an unknown
      // token is refused the same way and writes nothing to the store.
      const checked =
        m?.[1] === "DPoP" && typeof proof === "string"
          ? checkDpopProof(proof, req.method, requestUrl(rt, req), rt.now(), m[2] ?? "")
          : undefined;
      const found =
        m?.[2] === undefined || (m[1] === "DPoP" && checked === undefined)
          ? undefined
          : await rt.store.credentialSandbox(
              agentTokenHash(rt, m[2], checked?.jkt),
              "agent_token",
              "",
              ["active", "published"],
              rt.now(),
            );
      const s =
        found !== undefined &&
        (checked === undefined ||
          (await Promise.resolve()
            .then(() => rt.dpopReplay.once(checked.replayId, rt.now()))
            .catch(() => false)))
          ? found
          : undefined;
      const id = (req.params as Params)["id"];
      if (s === undefined) return rt.fail(req, reply);
      const t = rt.now();
      if (rt.sandboxRate.hit(s.id, t) > rt.requestsPerSandboxPerHour)
        return rt.limited(req, reply, retryAfterSeconds(rt.sandboxRate.waitMs(s.id, rt.requestsPerSandboxPerHour, t)));
      if (req.url.startsWith("/v1/sandboxes/") && (id === undefined || !rt.box.equal(id, s.id)))
        return rt.fail(req, reply);
      rt.facts(req).sandboxId = s.id;
      return h(s, req, reply);
    };
  };
  const pubUrl = (req: FastifyRequest, handle: string, slug = ""): string =>
    `${rt.origin(req, `${handle}.${rt.hosts.pubSuffix}`)}/${slug}`;

  api("GET", "/.well-known/agent-access", "discovery", async (req, reply) => {
    const base = rt.origin(req, rt.hosts.api);
    return reply.header("cache-control", "public, max-age=300").send({
      acp_version: "1.0",
      provider: { name: rt.providerName, docs: `${base}/.well-known/agent-access` },
      sandbox: {
        enabled: true,
        admission: rt.policy.issuers.length === 0 ? ["proof_of_work"] : ["proof_of_work", "issuer_token"],
        challenge_endpoint: `${base}/v1/sandboxes/challenge`,
        create_endpoint: `${base}/v1/sandboxes`,
        ttl_hours: rt.ttlMs / HOUR,
      },
      proof_of_work: {
        algorithm: POW_ALGORITHM,
        description:
          "find a nonce of 1 to 64 characters from [A-Za-z0-9] such that SHA-256 of the UTF-8 bytes of challenge + nonce (plain concatenation) has at least `difficulty` leading zero bits; each challenge is signed, single use and expires after 5 minutes; difficulty is adaptive",
        nonce_pattern: "^[A-Za-z0-9]{1,64}$",
      },
      admission: admissionDiscovery(rt, req),
      security: { handle_rotation_on_claim: true, handle_rotation_on_publish: true, adaptive_pow: true },
      content_types: ["faq"],
      agent_token: { token_types: ["Bearer", "DPoP"], dpop_signing_alg_values_supported: DPOP_ALGORITHMS },
      limits: {
        faqs_per_sandbox: FAQ_LIMITS.faqsPerSandbox,
        questions_per_faq: FAQ_LIMITS.questionsPerFaq,
        answer_bytes: FAQ_LIMITS.answerBytes,
        max_extensions: MAX_EXTENSIONS,
        extension_hours: 24,
      },
      claim: { method: "code_plus_pow", page: `${rt.origin(req, rt.hosts.admin)}/claim` },
    });
  });

  /** 503 while the breaker is open: `Retry-After`, message, `retry_after_seconds` say when it closes (same for all). */
  const paused = (reply: FastifyReply, now: number): FastifyReply => {
    const s = retryAfterSeconds(rt.admission.breakerRemainingMs(now));
    return reply
      .code(503)
      .header("retry-after", String(s))
      .send({
        error: {
          code: "claim_admission_paused",
          message: `sandbox creation is paused, try again in ${s} s`,
          retry_after_seconds: s,
        },
      });
  };

  api("GET", "/v1/sandboxes/challenge", "challenge", async (req, reply) => {
    const now = rt.now();
    if (rt.admission.breakerOpen(now)) return paused(reply, now);
    const d = await decideAdmission(rt, req, now);
    if (d.kind === "refuse") return rt.fail(req, reply);
    if (d.kind === "limited") return rt.limited(req, reply, d.retryAfterS);
    return reply.header("cache-control", "no-store").send({
      ...issueChallenge(rt.box, "create", d.binding, d.difficulty, now),
      note: "Difficulty is adaptive and may change",
    });
  });

  api("POST", "/v1/sandboxes", "sandbox.create", async (req, reply) => {
    const now = rt.now();
    const body = req.body as
      { admission?: { type?: unknown; challenge?: unknown; nonce?: unknown }; metadata?: unknown } | undefined;
    const adm = body?.admission;
    const source = rt.facts(req).source;
    if (rt.admission.breakerOpen(now)) return paused(reply, now);
    const meta = parseMetadata(body?.metadata);
    if (!meta.ok) return invalid(reply, meta.issue.code, meta.issue.message);
    const metadata = meta.value;
    // Token signature, then the proof-of-work bound to it, then its uses and the reputation (no sandbox lookups).
    const d = await decideAdmission(
      rt,
      req,
      now,
      (binding) =>
        adm?.type === "proof_of_work" && verifyChallenge(rt.box, "create", binding, adm.challenge, adm.nonce, now),
    );
    if (d.kind === "limited") return rt.limited(req, reply, d.retryAfterS);
    if (d.kind === "refuse") {
      rt.admission.recordFailure(source, now);
      return rt.fail(req, reply);
    }
    // A challenge is worth the difficulty the source needs now, not when it was issued: stockpiled while the
    // difficulty was low, solved and spent in a burst, challenges would outrun the adaptive rise (§11.2, §23.1).
    if (challengeDifficulty(adm?.challenge) < d.difficulty)
      return invalid(reply, "claim_challenge_stale", staleChallengeMessage(d.difficulty), 409);
    // The proof is spent here, whatever becomes of the creation (RFC 9449 §11.1: a proof is good for one request;
    // one left unspent by a creation that failed could be replayed): a client signs a new proof for every request,
    // retries included, and a proof sent twice is told so.
    const proof = req.headers["dpop"];
    const dpop =
      proof === undefined
        ? undefined
        : typeof proof === "string"
          ? await verifyDpopProof(proof, "POST", requestUrl(rt, req), now, rt.dpopReplay)
          : ({ ok: false, reason: "invalid" } as const);
    if (dpop !== undefined && !dpop.ok) return invalid(reply, "claim_invalid_dpop", DPOP_REFUSED[dpop.reason]);
    const jkt = dpop?.jkt;
    const token = newAgentToken();
    const made = await rt.store.createSandbox({
      challenge: adm?.challenge as string,
      tokenHash: agentTokenHash(rt, token, jkt),
      ttlMs: rt.ttlMs,
      tokenTtlMs: AGENT_TOKEN_TTL_MS,
      metadata,
      now,
      sourceKey: d.sourceKey,
      ...(d.token === undefined
        ? {}
        : {
            subjectKey: d.token.subjectKey,
            tokenUse: { hash: d.token.hash, maxUses: d.token.maxUses, expiresAt: d.token.expiresAt },
          }),
    });
    if (made === undefined) {
      rt.admission.recordFailure(source, now);
      return rt.fail(req, reply);
    }
    rt.admission.recordCreation(source, now);
    rt.facts(req).sandboxId = made.id;
    const base = `${rt.origin(req, rt.hosts.api)}/v1/sandboxes/${made.id}`;
    return reply
      .code(201)
      .header("cache-control", "no-store")
      .send({
        id: made.id,
        public_handle: made.handle,
        status: "active",
        expires_at: iso(made.expiresAt),
        agent_token: {
          token,
          token_type: jkt === undefined ? "Bearer" : "DPoP",
          expires_at: iso(made.tokenExpiresAt),
          scopes: ["sandbox:manage", "content:write", "content:publish"],
        },
        endpoints: {
          content: `${rt.origin(req, rt.hosts.api)}/v1/faqs`,
          preview: `${base}/preview`,
          claim: `${base}/claim`,
          delete: base,
        },
      });
  });

  api(
    "GET",
    "/v1/sandboxes/:id",
    "sandbox.get",
    authed(async (s, req, reply) =>
      reply.header("cache-control", "no-store").send({
        id: s.id,
        status: s.state,
        expires_at: iso(s.expires_at),
        extensions: s.extensions,
        public_handle: await rt.store.liveHandle(s.id),
      }),
    ),
  );

  api(
    "DELETE",
    "/v1/sandboxes/:id",
    "sandbox.delete",
    authed(async (s, req, reply) =>
      (await rt.store.deleteSandbox(s.id, rt.now())) ? reply.code(204).send() : rt.fail(req, reply),
    ),
  );

  api(
    "POST",
    "/v1/sandboxes/:id/extend",
    "sandbox.extend",
    authed(async (s, req, reply) => {
      const r = await rt.store.extend(s.id, EXTENSION_MS, MAX_EXTENSIONS, rt.now());
      if (r === undefined)
        return invalid(
          reply,
          "claim_extension_limit",
          `a sandbox can be extended at most ${MAX_EXTENSIONS} times`,
          409,
        );
      return reply.send({
        id: s.id,
        expires_at: iso(r.expiresAt),
        extensions: r.extensions,
        extensions_left: MAX_EXTENSIONS - r.extensions,
      });
    }),
  );

  api(
    "POST",
    "/v1/sandboxes/:id/claim",
    "sandbox.claim_code",
    authed(async (s, req, reply) => {
      if (s.state !== "published")
        return invalid(reply, "claim_not_published", "publish content before asking for a claim code", 409);
      const now = rt.now();
      // Per sandbox (its token holder's own share: nobody else can spend it), counted for every code asked for.
      if (rt.claimCodeRate.hit(s.id, now) > rt.claimCodesPerSandboxPerHour)
        return rt.limited(
          req,
          reply,
          retryAfterSeconds(rt.claimCodeRate.waitMs(s.id, rt.claimCodesPerSandboxPerHour, now)),
        );
      const code = newClaimCode();
      const hash = rt.box.hash("claim_code", normalizeClaimCode(code));
      if (!(await rt.store.issueCode(s.id, "claim_code", "", hash, CLAIM_CODE_TTL_MS, ["published"], now)))
        return rt.fail(req, reply);
      return reply.header("cache-control", "no-store").send({
        claim_code: code,
        claim_url: `${rt.origin(req, rt.hosts.admin)}/claim`,
        expires_at: iso(Math.min(now + CLAIM_CODE_TTL_MS, s.expires_at)),
      });
    }),
  );

  api(
    "POST",
    "/v1/sandboxes/:id/preview",
    "sandbox.preview_code",
    authed(async (s, req, reply) => {
      const surface = (req.body as { surface?: unknown } | undefined)?.surface ?? "preview";
      if (surface !== "preview" && surface !== "preview_admin")
        return invalid(reply, "claim_invalid_request", "`surface` must be `preview` or `preview_admin`");
      const code = newExchangeCode();
      const now = rt.now();
      if (
        !(await rt.store.issueCode(
          s.id,
          "exchange_code",
          surface,
          rt.box.hash("exchange_code", code),
          EXCHANGE_CODE_TTL_MS,
          ["active", "published"],
          now,
        ))
      )
        return rt.fail(req, reply);
      const host = surface === "preview" ? rt.hosts.preview : rt.hosts.previewAdmin;
      return reply.header("cache-control", "no-store").send({
        exchange_url: `${rt.origin(req, host)}/exchange?code=${code}`,
        expires_at: iso(Math.min(now + EXCHANGE_CODE_TTL_MS, s.expires_at)),
        surface,
      });
    }),
  );

  registerFaqRoutes(api, authed, rt, pubUrl);
}
