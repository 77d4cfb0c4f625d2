/**
 * `createAcpServer`: the whole service from its parts (pipeline, stores, key, audit appender): the
 * consent broker on the pending table, the decision service, the HTTP app. `acp serve` and the tests
 * call this.
 */
import { AGENT_TOKEN_NAME } from "@acp/proxy";
import type { FastifyInstance } from "fastify";
import type { Pipeline, RedactionRules } from "@acp/core";
import { createConsentBroker, createConsentRedactor, type ConsentBrokerHandle, type ConsentChannel } from "@acp/proxy";
import { createHttpApp, type HttpAppOptions } from "./http/app.js";
import { checkServerOptions } from "./server-options.js";
import { createMetrics, type ServerMetrics } from "./metrics/metrics.js";
import { createAuditSink, type AuditAppender } from "./service/audit-recorder.js";
import { completeConsent } from "./service/consent-completion.js";
import { createConsentProofs, type ServiceKeyPair } from "./service/consent-proofs.js";
import {
  createDecisionService,
  type DecisionService,
  type DecisionServiceOptions,
} from "./service/decision-service.js";
import { startExpirySweep } from "./service/expiry-sweep.js";
import { createTableChannel } from "./service/table-channel.js";
import type { ServerStores } from "./store/types.js";

/** What `createAcpServer` needs. */
export interface AcpServerOptions {
  /** The one pipeline (its rate limiter is the live one). */
  readonly pipeline: Pipeline;
  /**
   * A second pipeline on the same policy for the console's simulator; build it without spending rate
   * limits (`policySource(…, { spendRateLimits: false })`): a simulation is no call.
   */
  readonly simulationPipeline: Pipeline;
  /**
   * The standing rules without spending rate limits, to judge arguments a person edited before the caller
   * runs them (`DecisionServiceOptions.recheckEdits`). Default: `simulationPipeline`.
   */
  readonly recheckPipeline?: Pipeline;
  /**
   * The pipeline for callers whose `server` is their own word (all but named agents held to servers by
   * `agentServers`; ADR 0006), built by `anyServerPipelineOf` on the policy (and graph mapping) of
   * `pipeline`: a deny or ask rule for a server holds whatever server such a caller names, or none, and a
   * `classify:` or mapping entry for a server cannot loosen its call. Required: a built pipeline cannot be
   * re-read for any server, so there is no safe default; pass `pipeline` again to judge every caller as
   * named (right for a policy and mapping that name no server).
   */
  readonly anyServerPipeline: Pipeline;
  /**
   * `recheckPipeline` built so, for those callers: it re-checks their edited arguments and is the console
   * simulator's judge. Required, as `anyServerPipeline`.
   */
  readonly anyServerRecheckPipeline: Pipeline;
  readonly stores: ServerStores;
  /** Signs consent responses (and audit checkpoints, through the stores' audit writer). */
  readonly keys: ServiceKeyPair;
  /** Where decisions are recorded; default `stores.auditLog`. */
  readonly audit?: AuditAppender;
  readonly clock: () => Date;
  /** The agents' bearer token of the API; absent: the API answers loopback callers without one. */
  readonly token?: string;
  /**
   * The approvers' token: the only one that answers consent over the API (`POST /v1/consent/{id}/response`);
   * absent: consent is answered in the console, with `acp approve` or a channel. Must differ from `token`.
   */
  readonly approverToken?: string;
  /**
   * Agents' tokens that name their agent (name → token; `serve.agent_tokens`): each does what `token` does,
   * and a request made with it is that agent's — recorded under that name (a body naming another agent is
   * 403 `agent_mismatch`), its sessions its own; and no other caller may name that agent (403 `agent_mismatch`:
   * only its token speaks for it). Names: lowercase letters, digits, `_`; every token distinct.
   */
  readonly agentTokens?: Readonly<Record<string, string>>;
  /**
   * The servers a named agent may decide for (agent name → server names or globs; `serve.agent_servers`):
   * a request made with that agent's token must name one of them in `server` (another, or none, is 403
   * `server_not_allowed`, nothing decided or recorded), so an agent cannot claim a server whose rules are
   * looser than its own. Every name must be one of `agentTokens`; an agent without an entry may name any.
   */
  readonly agentServers?: Readonly<Record<string, readonly string[]>>;
  /**
   * Approvers' tokens that name their approver (name → token; `serve.approver_tokens`): each does what
   * `approverToken` does, and an answer given with it is recorded as approver `api:NAME` (a body naming
   * another `approver_id` is 403 `approver_mismatch`). Names and distinctness as for `agentTokens`.
   */
  readonly approverTokens?: Readonly<Record<string, string>>;
  /**
   * The origin browsers and clients use when a reverse proxy or load balancer is in front
   * (`https://acp.example.com`; `parsePublicUrl` of `@acp/proxy`): the loopback `Host` check and the console's
   * origin check take it, and an `https:` one makes the console cookie `Secure` and adds HSTS.
   */
  readonly publicUrl?: string;
  /** True when the listener is loopback only (the `Host` header is then checked). */
  readonly loopbackOnly: boolean;
  readonly tls?: { readonly key: string | Buffer; readonly cert: string | Buffer };
  /** More consent channels beside the pending table (terminal, webhook, Telegram). */
  readonly extraChannels?: readonly ConsentChannel[];
  readonly consentTimeoutMs?: number;
  readonly maxPending?: number;
  /** At most this many of them from one caller: see `DecisionServiceOptions.maxPendingPerCaller`. */
  readonly maxPendingPerCaller?: number;
  /** When a decision's audit event must be durable: see `DecisionServiceOptions.decisionAudit`. */
  readonly decisionAudit?: "queued" | "durable";
  /** Each caller's share of the policy work: see `DecisionServiceOptions.callerBudget`. */
  readonly callerBudget?: DecisionServiceOptions["callerBudget"];
  readonly bodyLimit?: number;
  /** Connections open at once and unread bytes a connection ({@link HttpAppOptions.connections}). */
  readonly connections?: HttpAppOptions["connections"];
  readonly log?: (line: string) => void;
  /**
   * Patterns hidden from the audit log (before hashing) and from the person asked for consent
   * (config.yml `redaction:`); default the built-in rules. The audit log takes them where it is opened
   * (`openEmbeddedServer` passes them to the stores).
   */
  readonly redaction?: RedactionRules;
  /**
   * Known secret values (the vault's), hidden wherever they appear: in every audit event (SQLite and
   * PostgreSQL logs, through `openEmbeddedServer`) and in consent requests. Read on every use.
   */
  readonly secrets?: () => readonly string[];
}

/** The running parts. */
export interface AcpServer {
  readonly app: FastifyInstance;
  readonly service: DecisionService;
  readonly metrics: ServerMetrics;
  readonly broker: ConsentBrokerHandle;
  /** Starts listening; resolves with the base URL (`http://127.0.0.1:PORT`). */
  listen(options: { readonly port: number; readonly host: string }): Promise<string>;
  /** Stops listening and closes the broker (the stores belong to the caller). */
  close(): Promise<void>;
}

export { AGENT_TOKEN_NAME };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Builds the service. */
export async function createAcpServer(options: AcpServerOptions): Promise<AcpServer> {
  const { publicUrl, agentTokens, approverTokens, serverScopes } = checkServerOptions(options);
  const metrics = createMetrics();
  const audit = createAuditSink(options.audit ?? options.stores.auditLog);
  const proofs = createConsentProofs(options.keys, options.stores.nonces);
  // a stored session or window approval: signed by this key for exactly this call (its nonce was spent by its first use)
  const grantProofs = createConsentProofs(options.keys);
  const tableChannel = createTableChannel({ stores: options.stores, clock: options.clock });
  const broker = createConsentBroker({
    channels: [tableChannel, ...(options.extraChannels ?? [])],
    sign: proofs.sign,
    verify: proofs.verify,
    clock: options.clock,
    audit,
    progressIntervalMs: 0,
    redact: createConsentRedactor(options.redaction, options.secrets),
    // `session` and window approvals hold on every node of the store (and across a restart)
    grants: options.stores.grants,
    verifyGrant: grantProofs.verify,
    shareSessionGrants: true,
  });
  const recheck = options.recheckPipeline ?? options.simulationPipeline;
  const anyServerRecheck = options.anyServerRecheckPipeline;
  /** The re-check of a caller's edited arguments: as named only for an agent held to servers (ADR 0006). */
  const recheckFor = (caller: string | undefined): Pipeline =>
    caller !== undefined && serverScopes.has(caller) ? recheck : anyServerRecheck;
  const service = createDecisionService({
    pipeline: options.pipeline,
    recheckEdits: recheck,
    anyServerPipeline: options.anyServerPipeline,
    anyServerRecheckEdits: anyServerRecheck,
    stores: options.stores,
    broker,
    audit,
    metrics,
    clock: options.clock,
    ...(options.consentTimeoutMs !== undefined ? { consentTimeoutMs: options.consentTimeoutMs } : {}),
    ...(options.maxPending !== undefined ? { maxPending: options.maxPending } : {}),
    ...(options.maxPendingPerCaller !== undefined ? { maxPendingPerCaller: options.maxPendingPerCaller } : {}),
    ...(options.decisionAudit !== undefined ? { decisionAudit: options.decisionAudit } : {}),
    ...(options.callerBudget !== undefined ? { callerBudget: options.callerBudget } : {}),
    ...(serverScopes.size > 0 ? { serverScopes } : {}),
    ...(agentTokens.size > 0 ? { namedAgents: new Set(agentTokens.keys()) } : {}),
  });
  /** Set when `close` begins: `/readyz` answers 503 from then on. */
  let stopping = false;
  const app = await createHttpApp({
    service,
    stopping: () => stopping,
    stores: options.stores,
    metrics,
    clock: options.clock,
    simulate: async (request) => {
      const now = options.clock();
      // as /v1/decide judges a caller whose `server` is only its word, and as it judges an agent held to
      // servers that may name it (ADR 0006)
      const decision = await anyServerRecheck.decide(request, now);
      const named = isRecord(request) && typeof request["server"] === "string";
      return { decision, heldToServer: named ? await options.simulationPipeline.decide(request, now) : null };
    },
    completeConsent: (id, signal, caller) =>
      completeConsent(
        {
          stores: options.stores,
          ...proofs,
          audit,
          clock: options.clock,
          recheck: (request) => recheckFor(caller).decide(request, options.clock()),
        },
        id,
        signal,
      ),
    auth: {
      ...(options.token !== undefined ? { token: options.token } : {}),
      ...(options.approverToken !== undefined ? { approverToken: options.approverToken } : {}),
      ...(publicUrl !== undefined ? { publicHost: publicUrl.host, publicOrigin: publicUrl.origin } : {}),
      ...(agentTokens.size > 0 ? { agentTokens } : {}),
      ...(approverTokens.size > 0 ? { approverTokens } : {}),
      loopbackOnly: options.loopbackOnly,
    },
    ...(publicUrl !== undefined ? { publicUrl } : {}),
    ...(options.tls !== undefined ? { tls: options.tls } : {}),
    ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
    ...(options.connections !== undefined ? { connections: options.connections } : {}),
    ...(options.log !== undefined ? { log: options.log } : {}),
  });
  // requests whose waiting call died with its node (or service) are concluded (consent_expired) by some node
  const sweep = startExpirySweep({
    stores: options.stores,
    audit,
    clock: options.clock,
    ...(options.log !== undefined ? { log: options.log } : {}),
  });
  return {
    app,
    service,
    metrics,
    broker,
    async listen({ port, host }) {
      await app.listen({ port, host });
      const address = app.server.address();
      const actual = typeof address === "object" && address !== null ? address.port : port;
      const shownHost = host.includes(":") ? `[${host}]` : host;
      return `${options.tls !== undefined ? "https" : "http"}://${shownHost}:${actual}`;
    },
    async close() {
      stopping = true;
      await sweep.stop();
      // waiting calls first: each is answered `withdrawn` and recorded while the audit is still open
      const withdrawn = await service.close();
      if (withdrawn > 0) {
        options.log?.(
          `stopping: withdrew ${withdrawn} call(s) waiting for a person (each answered route refuse, consent ` +
            "outcome withdrawn, consent_withdrawn recorded); their agents may ask again on another node",
        );
      }
      await app.close();
      await broker.close();
    },
  };
}
