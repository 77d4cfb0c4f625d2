import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasLoneSurrogate } from "../content/faq.js";
import { isHandleShape, MALFORMED_CLAIM_CODE, newSessionToken, normalizeClaimCode } from "../ids/random-ids.js";
import { challengeDifficulty, issueChallenge, staleChallengeMessage, verifyChallenge } from "../pow/challenge.js";
import type { SandboxRow } from "../store/claim-store.js";
import { chargeEvent, reputationBits } from "./admission-gate.js";
import { cookie, readCookie, sessionHash, type ClaimRuntime } from "./context.js";
import { retryAfterSeconds } from "./failure.js";
import { invalid } from "./faq-routes.js";
import { claimPage, exchangePage, faqsPage, noProofPage, notFromPagePage, pageCsp, summaryPage } from "./pages.js";

const HOUR = 3_600_000;
/** Preview sessions last at most 1 h (and never past the sandbox). */
export const PREVIEW_SESSION_TTL_MS = HOUR;
/** Owner sessions on the admin origin last 12 h. */
export const OWNER_SESSION_TTL_MS = 12 * HOUR;

/** Headers of every HTML page on the preview, preview-admin and admin surfaces (§16, §21). */
function html(reply: FastifyReply, body: string, script = false, noindex = true): FastifyReply {
  reply.header("content-type", "text/html; charset=utf-8").header("cache-control", "no-store");
  reply.header("x-frame-options", "DENY").header("content-security-policy", pageCsp(script));
  if (noindex) reply.header("x-robots-tag", "noindex, nofollow");
  return reply.send(body);
}

/**
 * Whether a browser POST comes from the page's own origin (CSRF, §21). `Sec-Fetch-Site`, when sent, must be
 * `same-origin`; `Origin`, when sent, must be this origin — except `null`, which browsers send for a form
 * POST under `Referrer-Policy: no-referrer`, and which is then accepted only with `Sec-Fetch-Site: same-origin`.
 */
function sameOrigin(rt: ClaimRuntime, req: FastifyRequest, host: string): boolean {
  const origin = req.headers.origin;
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin") return false;
  if (origin === "null") return site === "same-origin";
  return origin === undefined || origin === rt.origin(req, host);
}

/**
 * Whether a POST says where it was sent from at all: every browser that can show the exchange page sends `Origin`
 * with a form POST, and current ones `Sec-Fetch-Site` too. A request with neither is not the page's button press
 * (§17.2: consumed only by a deliberate POST a human makes) but a tool, a link scanner or a script, and cannot be
 * told from a cross-site one (§21); it is refused before the code is looked at.
 */
function statesItsOrigin(req: FastifyRequest): boolean {
  return req.headers.origin !== undefined || req.headers["sec-fetch-site"] !== undefined;
}

/** Serves a published sandbox at `{handle}.{pubSuffix}`: `/` and `/{slug}` only, GET/HEAD only (§13.1). */
export async function servePublished(
  rt: ClaimRuntime,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const f = rt.facts(req);
  f.action = "published.view";
  const handle = f.handle ?? "";
  const path = req.url.split("?")[0] ?? "";
  const slug = /^\/([a-z0-9-]{0,64})$/.exec(path)?.[1];
  if ((req.method !== "GET" && req.method !== "HEAD") || slug === undefined || !isHandleShape(handle))
    return rt.fail(req, reply);
  const s = await rt.store.sandboxByHandle(handle, rt.now());
  if (s === undefined) return rt.fail(req, reply);
  f.sandboxId = s.id;
  const faqs = (await rt.store.listFaqs(s.id, true)).filter((x) => slug === "" || x.body.slug === slug);
  if (faqs.length === 0) return rt.fail(req, reply);
  return html(
    reply,
    faqsPage(
      faqs[0]?.body.title ?? "FAQ",
      faqs,
      s.state === "claimed" ? "" : "Unclaimed sandbox content, made by an AI agent.",
    ),
    false,
    s.state !== "claimed",
  );
}

/** Registers the preview, preview-admin and admin surfaces. */
export function registerBrowserRoutes(app: FastifyInstance, rt: ClaimRuntime): void {
  const surfaces = {
    preview: { host: rt.hosts.preview, cookie: "acp_pv", label: "preview" },
    preview_admin: { host: rt.hosts.previewAdmin, cookie: "acp_pva", label: "preview admin" },
  } as const;
  const surfaceOf = (req: FastifyRequest): keyof typeof surfaces | undefined => {
    const k = rt.facts(req).kind;
    return k === "preview" || k === "preview_admin" ? k : undefined;
  };
  const session = async (req: FastifyRequest): Promise<SandboxRow | undefined> => {
    const sf = surfaceOf(req);
    const v = sf === undefined ? undefined : readCookie(rt, req, surfaces[sf].cookie);
    if (sf === undefined || v === undefined || !/^[A-Za-z0-9]{43}$/.test(v)) return undefined;
    return rt.store.credentialSandbox(
      sessionHash(rt, req, v),
      "preview_session",
      sf,
      ["active", "published"],
      rt.now(),
    );
  };

  app.get("/exchange", async (req, reply) => {
    const sf = surfaceOf(req);
    rt.facts(req).action = "exchange.form";
    if (sf === undefined) return rt.fail(req, reply);
    const code = (req.query as Record<string, unknown>)["code"];
    return html(reply, exchangePage(typeof code === "string" ? code : "", surfaces[sf].label));
  });

  app.post("/exchange", async (req, reply) => {
    const sf = surfaceOf(req);
    rt.facts(req).action = "exchange.consume";
    if (sf === undefined) return rt.fail(req, reply);
    if (!statesItsOrigin(req)) {
      rt.facts(req).action = "exchange.not_from_page";
      return html(reply.code(403), notFromPagePage(surfaces[sf].label));
    }
    if (!sameOrigin(rt, req, surfaces[sf].host)) return rt.fail(req, reply);
    const code = (req.body as Record<string, unknown> | undefined)?.["code"];
    // A code is ASCII: text that is not even well-formed (a lone surrogate, as JSON can send) finds nothing.
    if (typeof code !== "string" || code.length > 100 || hasLoneSurrogate(code)) return rt.fail(req, reply);
    const token = newSessionToken();
    const id = await rt.store.consumeExchange(
      rt.box.hash("exchange_code", code),
      sf,
      sessionHash(rt, req, token),
      PREVIEW_SESSION_TTL_MS,
      rt.now(),
    );
    if (id === undefined) return rt.fail(req, reply);
    rt.facts(req).sandboxId = id;
    return reply
      .code(303)
      .header("set-cookie", cookie(rt, surfaces[sf].cookie, token, PREVIEW_SESSION_TTL_MS / 1000))
      .header("location", "/")
      .header("cache-control", "no-store")
      .send();
  });

  app.get("/", async (req, reply) => {
    const k = rt.facts(req).kind;
    rt.facts(req).action = `${k ?? "unknown"}.view`;
    if (k === "admin") return reply.code(303).header("location", "/claim").send();
    const s = await session(req);
    if (s === undefined) return rt.fail(req, reply);
    rt.facts(req).sandboxId = s.id;
    const faqs = await rt.store.listFaqs(s.id);
    if (k === "preview")
      return html(
        reply,
        faqsPage("Preview", faqs, "Preview of unclaimed sandbox content made by an AI agent. Read-only."),
      );
    const rows: [string, string][] = [
      ["state", s.state],
      ["expires", new Date(s.expires_at).toISOString()],
      ["extensions", String(s.extensions)],
    ];
    return html(reply, summaryPage("Sandbox (read-only)", rows, faqs));
  });

  registerClaimRoutes(app, rt);
}

function registerClaimRoutes(app: FastifyInstance, rt: ClaimRuntime): void {
  const admin = (req: FastifyRequest): boolean => rt.facts(req).kind === "admin";
  const csrfOk = (req: FastifyRequest, sent: unknown): boolean => {
    const c = readCookie(rt, req, "acp_csrf");
    return c !== undefined && typeof sent === "string" && rt.box.equal(c, sent) && sameOrigin(rt, req, rt.hosts.admin);
  };
  /**
   * The typed code: `key`, the keyed hash of its canonical form (what the challenge binds and the store looks up),
   * and `counter`, what its per-code rate limit and lockout count under. A well-formed code counts under its own
   * hash, whoever sends it (a code guessed from many ranges still locks). Every malformed input has one
   * canonical form, so it counts under the sender's range instead: one shared counter let a sender of garbage
   * lock out everyone else's mistyped codes, and everyone's typos lock out each other (§19.5). A malformed code
   * can match nothing, so keying it by its sender gives a guesser nothing.
   */
  const typedCode = (req: FastifyRequest, raw: unknown): { key: string; counter: string } => {
    const canonical = normalizeClaimCode(typeof raw === "string" ? raw : "");
    const key = rt.box.hash("claim_code", canonical);
    return { key, counter: canonical === MALFORMED_CLAIM_CODE ? `malformed:${rt.facts(req).source}` : `code:${key}` };
  };
  /**
   * Rate limits and lockout, per address and per typed code (see `typedCode`), before anything is looked up: the
   * `Retry-After` seconds when refused, else undefined. A refusal by the caller's own range (its rate or its
   * lockout) says when that range has room again, from its window or lockout. A refusal by the code's counter
   * alone says the longest that counter can hold (the window and one slice, or the longest lockout): the code's
   * own history comes from whoever typed it, and the answer must tell nothing more than that it was refused
   * (§10, §19.5).
   */
  const throttled = (req: FastifyRequest, counter: string): number | undefined => {
    const now = rt.now();
    const ip = rt.facts(req).source;
    const ipKey = `ip:${ip}`;
    // The same hits as ever: the code's counter counts every attempt the range's rate let through.
    const ipOver = rt.claimRate.hit(ip, now) > rt.claimPerIpPerHour;
    const codeOver = !ipOver && rt.codeRate.hit(counter, now) > rt.claimPerCodePerHour;
    if (ipOver || rt.lockout.locked(ipKey, now)) {
      const waitMs = Math.max(rt.claimRate.waitMs(ip, rt.claimPerIpPerHour, now), rt.lockout.remainingMs(ipKey, now));
      return retryAfterSeconds(waitMs);
    }
    if (codeOver) return retryAfterSeconds(rt.codeRate.longestWaitMs);
    if (rt.lockout.locked(counter, now)) return retryAfterSeconds(rt.lockout.longestMs);
    return undefined;
  };

  /**
   * The difficulty a claim challenge for this caller needs now: the creation difficulty of its range (§19.2 SHOULD
   * use the same) plus its range's reputation bits, capped. Asked when a challenge is issued and again when it is
   * verified.
   */
  const claimDifficulty = async (req: FastifyRequest, now: number): Promise<number> => {
    const bits = rt.admission.difficulty(rt.facts(req).source, now) + (await reputationBits(rt, req, now));
    return Math.min(rt.admission.maxDifficulty, bits);
  };

  app.get("/claim", async (req, reply) => {
    rt.facts(req).action = "claim.page";
    if (!admin(req)) return rt.fail(req, reply);
    const csrf = newSessionToken();
    reply.header("set-cookie", cookie(rt, "acp_csrf", csrf, 3600));
    return html(reply, claimPage(csrf), true);
  });

  app.post("/claim/challenge", async (req, reply) => {
    rt.facts(req).action = "claim.challenge";
    const b = (req.body ?? {}) as Record<string, unknown>;
    if (!admin(req) || !csrfOk(req, b["csrf"])) return rt.fail(req, reply);
    const { key: codeKey, counter } = typedCode(req, b["code"]);
    const retryAfterS = throttled(req, counter);
    if (retryAfterS !== undefined) return rt.limited(req, reply, retryAfterS);
    const now = rt.now();
    const c = issueChallenge(rt.box, "claim", codeKey, await claimDifficulty(req, now), now);
    return reply.header("cache-control", "no-store").send(c);
  });

  app.post("/claim/verify", async (req, reply) => {
    rt.facts(req).action = "claim.verify";
    const b = (req.body ?? {}) as Record<string, unknown>;
    if (!admin(req) || !csrfOk(req, b["csrf"])) return rt.fail(req, reply);
    const { key: codeKey, counter } = typedCode(req, b["code"]);
    const retryAfterS = throttled(req, counter);
    if (retryAfterS !== undefined) return rt.limited(req, reply, retryAfterS);
    // No proof at all is no verification: the code is not looked up, and nothing counts toward the lockout, the
    // range's difficulty or its reputation — only a failed proof does. The claim page's own form posts here
    // without one when the browser runs no script: it gets a page saying why, not the failure answer.
    if (b["challenge"] === undefined && b["nonce"] === undefined) {
      rt.facts(req).action = "claim.no_proof";
      if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers["content-type"] ?? "")) return rt.fail(req, reply);
      return html(reply.code(400), noProofPage());
    }
    const now = rt.now();
    const proved = verifyChallenge(rt.box, "claim", codeKey, b["challenge"], b["nonce"], now);
    // The proof is worth the difficulty the range needs now, not when the challenge was issued (the difficulty the
    // challenge states is signed into it, so it cannot be lowered, but it can be old): challenges fetched while
    // the range was quiet, solved and spent after its failures raised the difficulty, would outrun the adaptive
    // rise. Decided before the code is looked up, the same for every code: nothing is spent or counted.
    if (proved) {
      const needed = await claimDifficulty(req, now);
      if (challengeDifficulty(b["challenge"]) < needed) {
        rt.facts(req).action = "claim.stale_challenge";
        return invalid(reply, "claim_challenge_stale", staleChallengeMessage(needed), 409);
      }
    }
    const token = newSessionToken();
    const ok =
      proved &&
      (await rt.store.claim({
        codeHash: codeKey,
        challenge: b["challenge"] as string,
        ownerSessionHash: sessionHash(rt, req, token),
        ownerTtlMs: OWNER_SESSION_TTL_MS,
        now,
      }));
    if (ok === false || ok === undefined) {
      const ip = rt.facts(req).source;
      const lockedOut = rt.lockout.fail(`ip:${ip}`, now);
      rt.lockout.fail(counter, now);
      rt.admission.recordFailure(ip, now);
      // Keyed by the caller's range only, the same for real and unknown codes: no oracle (§10).
      if (lockedOut) await chargeEvent(rt, req, "lockout", now);
      return rt.fail(req, reply);
    }
    rt.facts(req).sandboxId = ok.id;
    reply.header("set-cookie", cookie(rt, "acp_owner", token, OWNER_SESSION_TTL_MS / 1000));
    return reply
      .header("cache-control", "no-store")
      .header("x-frame-options", "DENY")
      .send({
        status: "claimed",
        workspace_url: `${rt.origin(req, rt.hosts.admin)}/workspace`,
        published_url: `${rt.origin(req, `${ok.handle}.${rt.hosts.pubSuffix}`)}/`,
      });
  });

  app.get("/workspace", async (req, reply) => {
    rt.facts(req).action = "workspace.view";
    const v = readCookie(rt, req, "acp_owner");
    const s =
      !admin(req) || v === undefined
        ? undefined
        : await rt.store.credentialSandbox(sessionHash(rt, req, v), "owner_session", "admin", ["claimed"], rt.now());
    if (s === undefined) return rt.fail(req, reply);
    rt.facts(req).sandboxId = s.id;
    const handle = (await rt.store.liveHandle(s.id)) ?? "";
    const rows: [string, string][] = [
      ["state", "claimed (workspace)"],
      ["published at", `${rt.origin(req, `${handle}.${rt.hosts.pubSuffix}`)}/`],
    ];
    return html(reply, summaryPage("Your workspace", rows, await rt.store.listFaqs(s.id)), false, true);
  });
}
