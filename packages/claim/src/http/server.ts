import { randomBytes } from "node:crypto";
import type { Database } from "better-sqlite3";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { applyMigrations, type PostgresStore } from "@acp/store";
import { AdmissionControl, type AdmissionOptions } from "../admission/admission-control.js";
import type { AdmissionMode, AdmissionPolicyOptions } from "../admission/admission-config.js";
import { createAdmissionPolicy } from "./admission-gate.js";
import { ProgressiveLockout, WindowCounter } from "../admission/rate-limiter.js";
import { PublishedContentIndex } from "../content/similarity.js";
import { DpopReplayCache, SharedDpopReplay } from "../secrets/dpop.js";
import { createSecretBox } from "../secrets/keyed-hash.js";
import type { ClaimStore } from "../store/claim-store.js";
import { CLAIM_MIGRATIONS } from "../store/migrations.js";
import { PostgresClaimStore } from "../store/postgres-claim-store.js";
import { SqliteClaimStore } from "../store/sqlite-claim-store.js";
import { API_BODY_MEDIA_TYPE_MESSAGE, registerApiRoutes } from "./api-routes.js";
import { registerBrowserRoutes, servePublished } from "./browser-routes.js";
import {
  bareAddress,
  clientAddress,
  coarseSource,
  type ClaimLogEntry,
  type ClaimRuntime,
  type RequestFacts,
} from "./context.js";
import { ARRIVAL, retryAfterSeconds, sendFailure, sendLimited } from "./failure.js";
import { DEFAULT_HOSTS, classifyHost, hostPort, type ClaimHosts } from "./origins.js";

/** Options of {@link createClaimServer}. */
export interface ClaimServerOptions {
  /** An open SQLite state database (`openStateDb`); the claim migrations are applied to it. */
  readonly db?: Database;
  /**
   * Or an open PostgreSQL store with `CLAIM_POSTGRES_MIGRATIONS` applied (see `openClaimPostgres`); it is
   * closed with the server. Exactly one of `db` and `postgres`.
   */
  readonly postgres?: PostgresStore;
  /** The provider key (≥ 32 bytes): keyed hashes of secrets, challenge signatures, sealing. */
  readonly key: Uint8Array;
  /** Host names per surface (default `*.localhost`). */
  readonly hosts?: Partial<ClaimHosts>;
  /** Served over TLS (https URLs, `Secure` and `__Host-` cookies). */
  readonly tls?: boolean;
  /** Wall clock in ms (default `Date.now`). */
  readonly now?: () => number;
  /** Minimum time before any failure answer is sent (default 250 ms). */
  readonly minFailureMs?: number;
  /** Sandbox TTL in hours (default 48). */
  readonly ttlHours?: number;
  /** Adaptive proof-of-work tuning. */
  readonly admission?: AdmissionOptions;
  /**
   * Long-term admission beside the proof-of-work (§11.2): mode (`pow`, `pow+reputation` — the default —,
   * `issuer-required`), trusted issuers of admission tokens, persistent reputation tuning.
   */
  readonly admissionPolicy?: AdmissionPolicyOptions;
  /**
   * Addresses of reverse proxies (TLS terminators) in front: a request from one of them is the client named by
   * the rightmost `X-Forwarded-For` hop it appended. Without them, every request behind a proxy is the proxy's
   * range: one request budget, one claim lockout, one reputation for every client.
   */
  readonly trustedProxies?: readonly string[];
  /** Requests per address per hour on any surface (default 500, §28). */
  readonly requestsPerIpPerHour?: number;
  /** Authenticated agent requests per sandbox per hour (default 500, §28). */
  readonly requestsPerSandboxPerHour?: number;
  /**
   * Claim codes a sandbox may be issued per hour (default 10): counted per sandbox, so only its agent token spends
   * it, and a code lives at most an hour, so at most this many are live at once (§19.1). Beside the per-sandbox and
   * per-range request budgets, which every call counts toward.
   */
  readonly claimCodesPerSandboxPerHour?: number;
  /** Claim attempts per address per hour (default 30) and per code per hour (default 10). */
  readonly claimPerIpPerHour?: number;
  readonly claimPerCodePerHour?: number;
  /** Publications per sandbox per hour (default 20) and per address range per hour (default 60), §23.2. */
  readonly publishPerSandboxPerHour?: number;
  readonly publishPerSourcePerHour?: number;
  /** The same content may be published from at most this many sandboxes per 24 h (default 3), §23.3. */
  readonly maxSandboxesPerContent?: number;
  /** Receives one entry per request (§22). Default: none. */
  readonly log?: (entry: ClaimLogEntry) => void;
  /** Shown in discovery. */
  readonly providerName?: string;
}

/** A running-ready provider: the Fastify app and its store. */
export interface ClaimServer {
  readonly app: FastifyInstance;
  readonly store: ClaimStore;
  /** The admission mode in force (`pow`, `pow+reputation`, `issuer-required`). */
  readonly admissionMode: AdmissionMode;
  /** Listens on `host:port` (default 127.0.0.1) and resolves to the bound port. */
  listen(port: number, host?: string): Promise<number>;
  close(): Promise<void>;
}

function openStore(options: ClaimServerOptions, box: ReturnType<typeof createSecretBox>): ClaimStore {
  if ((options.db === undefined) === (options.postgres === undefined))
    throw new Error("claim server: give exactly one of `db` (SQLite) and `postgres`");
  if (options.postgres !== undefined) return new PostgresClaimStore(options.postgres, box);
  const db = options.db!;
  applyMigrations(db, CLAIM_MIGRATIONS);
  return new SqliteClaimStore(db, box);
}

/** Builds the Agent Claim Protocol provider (all surfaces on one listener, routed by Host header). */
export function createClaimServer(options: ClaimServerOptions): ClaimServer {
  const box = createSecretBox(options.key);
  const policy = createAdmissionPolicy(options.admissionPolicy);
  const store = openStore(options, box);
  const now = options.now ?? ((): number => Date.now());
  const hosts: ClaimHosts = { ...DEFAULT_HOSTS, ...options.hosts };
  const tls = options.tls === true;
  const minFailureMs = options.minFailureMs ?? 250;
  const facts = new WeakMap<FastifyRequest, RequestFacts>();
  const proxies = new Set((options.trustedProxies ?? []).map(bareAddress));
  const sourceOf = (req: FastifyRequest): string =>
    coarseSource(clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], proxies));
  const perIp = new WindowCounter(3_600_000);
  const perIpLimit = options.requestsPerIpPerHour ?? 500;
  const abandoned = policy.persistent
    ? { points: policy.reputation.pointsFor("abandoned"), halfLifeMs: policy.reputation.halfLifeMs }
    : undefined;
  const sweep = (t: number): Promise<number> => store.sweep(t, abandoned);
  const rt: ClaimRuntime = {
    store,
    box,
    admission: new AdmissionControl(options.admission),
    policy,
    hosts,
    tls,
    now,
    minFailureMs,
    ttlMs: (options.ttlHours ?? 48) * 3_600_000,
    providerName: options.providerName ?? "ACP claim provider",
    claimRate: new WindowCounter(3_600_000),
    codeRate: new WindowCounter(3_600_000),
    lockout: new ProgressiveLockout(5, 30_000, 3_600_000),
    claimPerIpPerHour: options.claimPerIpPerHour ?? 30,
    claimPerCodePerHour: options.claimPerCodePerHour ?? 10,
    sandboxRate: new WindowCounter(3_600_000),
    requestsPerSandboxPerHour: options.requestsPerSandboxPerHour ?? 500,
    claimCodeRate: new WindowCounter(3_600_000),
    claimCodesPerSandboxPerHour: options.claimCodesPerSandboxPerHour ?? 10,
    publishRate: new WindowCounter(3_600_000),
    publishPerSandboxPerHour: options.publishPerSandboxPerHour ?? 20,
    publishPerSourcePerHour: options.publishPerSourcePerHour ?? 60,
    published: new PublishedContentIndex(options.maxSandboxesPerContent ?? 3),
    dpopReplay: new SharedDpopReplay(new DpopReplayCache(), (id, until) =>
      store.spendProof(box.hash("dpop_proof", id), until),
    ),
    facts: (req) =>
      facts.get(req) ?? { requestId: "-", kind: undefined, handle: undefined, source: "unknown", action: "unknown" },
    fail: (req, reply) => sendFailure(req, reply, minFailureMs),
    limited: (req, reply, retryAfterS) => sendLimited(req, reply, minFailureMs, retryAfterS),
    origin: (req, host) => `${tls ? "https" : "http"}://${host}${hostPort(req.headers.host)}`,
  };

  /** The headers every answer carries, whatever the surface. */
  const commonHeaders = (reply: FastifyReply): void => {
    reply.header("x-content-type-options", "nosniff").header("referrer-policy", "no-referrer");
    reply
      .header("x-frame-options", "DENY")
      .header("content-security-policy", "default-src 'none'; frame-ancestors 'none'");
  };
  const app = Fastify({
    logger: false,
    bodyLimit: 1024 * 1024,
    trustProxy: false,
    return503OnClosing: true,
    // A path the router cannot decode (bad percent-encoding) or a parameter longer than any id is an invalid id: the
    // one failure answer with every usual header, rate limited like the rest — not Fastify's own body, which echoed
    // the path and had a shape of its own (§10).
    frameworkErrors: (_err, req, reply) => {
      ARRIVAL.set(req, performance.now());
      commonHeaders(reply);
      const source = sourceOf(req);
      const t = now();
      if (perIp.hit(source, t) > perIpLimit)
        return void sendLimited(req, reply, minFailureMs, retryAfterSeconds(perIp.waitMs(source, perIpLimit, t)));
      return void sendFailure(req, reply, minFailureMs);
    },
  });
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: 4096 },
    (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );
  let lastSweep = 0;
  app.addHook("onRequest", async (req, reply) => {
    ARRIVAL.set(req, performance.now());
    const c = classifyHost(req.headers.host, hosts);
    const source = sourceOf(req);
    facts.set(req, {
      requestId: randomBytes(8).toString("hex"),
      kind: c?.kind,
      handle: c?.handle,
      source,
      action: "unknown",
    });
    commonHeaders(reply);
    const t = now();
    if (perIp.hit(source, t) > perIpLimit)
      return sendLimited(req, reply, minFailureMs, retryAfterSeconds(perIp.waitMs(source, perIpLimit, t)));
    if (t - lastSweep > 1000) {
      lastSweep = t;
      // Expiry is also checked by every query; the sweep only ends rows (a failed sweep is retried later).
      sweep(t).catch(() => undefined);
    }
    if (c === undefined) return sendFailure(req, reply, minFailureMs);
    if (c.kind === "pub") return servePublished(rt, req, reply);
    const write = req.method !== "GET" && req.method !== "HEAD";
    if (c.kind === "preview_admin" && write && req.url.split("?")[0] !== "/exchange") {
      facts.get(req)!.action = "preview_admin.write_refused";
      return reply
        .code(405)
        .header("allow", "GET, HEAD")
        .header("cache-control", "no-store")
        .send({ error: { code: "claim_read_only", message: "preview admin is read-only" } });
    }
    return undefined;
  });
  app.addHook("onResponse", async (req, reply) => {
    const f = facts.get(req);
    if (options.log === undefined || f === undefined) return;
    options.log({
      time: new Date(now()).toISOString(),
      request_id: f.requestId,
      action: f.action,
      status: reply.statusCode,
      ip_range: f.source,
      ...(f.sandboxId === undefined ? {} : { sandbox_id: f.sandboxId }),
    });
  });
  app.setNotFoundHandler((req, reply) => sendFailure(req, reply, minFailureMs));
  app.setErrorHandler(async (err, req, reply) => {
    const status = (err as { statusCode?: number }).statusCode ?? 500;
    if (status >= 400 && status < 500 && status !== 404) {
      // 415: a body of a type no route reads (the API reads JSON only; see `apiBodyProblem`).
      const [code, message] =
        status === 413
          ? [413, "request body too large"]
          : status === 415
            ? [415, API_BODY_MEDIA_TYPE_MESSAGE]
            : [400, "malformed request body"];
      return reply
        .code(code)
        .header("cache-control", "no-store")
        .send({ error: { code: "claim_invalid_request", message } });
    }
    if (status === 404) return sendFailure(req, reply, minFailureMs);
    return reply
      .code(500)
      .header("cache-control", "no-store")
      .send({ error: { code: "claim_internal", message: "internal error" } });
  });
  registerApiRoutes(app, rt);
  registerBrowserRoutes(app, rt);

  const timer = setInterval(() => void sweep(now()).catch(() => undefined), 60_000);
  timer.unref();
  return {
    app,
    store,
    admissionMode: policy.mode,
    listen: async (port, host = "127.0.0.1") => {
      await app.listen({ port, host });
      const addr = app.server.address();
      return typeof addr === "object" && addr !== null ? addr.port : port;
    },
    close: async () => {
      clearInterval(timer);
      await app.close();
      await options.postgres?.close();
    },
  };
}
