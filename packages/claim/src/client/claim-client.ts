import type { JsonWebKey } from "node:crypto";
import { solvePow, type SolveOptions } from "../pow/solver.js";
import { dpopProof, newDpopKey, type DpopKey } from "../secrets/dpop.js";
import { nodeTransport, type Transport } from "./transport.js";
import { ADMISSION_TOKEN_HEADER } from "../admission/admission-token.js";

/** A sandbox as the agent holds it (keep `token` secret: it is the only credential). */
export interface AgentSandbox {
  readonly id: string;
  readonly token: string;
  readonly public_handle: string;
  readonly expires_at: string;
  readonly api: string;
  /** The private DPoP key the token is bound to (§20.1), when the provider bound it; as secret as the token. */
  readonly dpop_key?: JsonWebKey;
}

/** An FAQ as the agent writes it (§25). */
export interface FaqInput {
  readonly title: string;
  readonly slug?: string;
  readonly description?: string;
  readonly settings?: Record<string, unknown>;
  readonly questions?: readonly { question: string; answer: string; order?: number }[];
}

/** The result of {@link ClaimClient.publishFaq}. */
export interface PublishedFaq {
  readonly sandbox: AgentSandbox;
  readonly faq_id: string;
  readonly published_url: string;
  readonly previous_handle: string | null;
  readonly new_handle: string;
}

/** A provider answered with an error. */
export class ClaimClientError extends Error {
  /** The HTTP status and the provider's stable code (`not_found` for the uniform failure). */
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
    this.name = "ClaimClientError";
  }
}

/** Options of {@link ClaimClient}. */
export interface ClaimClientOptions {
  readonly transport?: Transport;
  readonly solve?: SolveOptions;
  /** Ask for a DPoP-bound agent token (default true; a provider without DPoP answers with a bearer token). */
  readonly dpop?: boolean;
  /**
   * An admission token from an issuer the provider trusts (§11.2), sent in `ACP-Admission-Token` on the challenge
   * and creation requests: lowers the proof-of-work difficulty, or is required by an `issuer-required` provider.
   */
  readonly admissionToken?: string;
}

/**
 * The agent side of the Agent Claim Protocol: discovery → admission (proof-of-work solved with worker
 * threads) → sandbox → FAQ → publish → claim link. `providerUrl` is the API origin (e.g.
 * `http://api.localhost:8080`).
 */
export class ClaimClient {
  private readonly transport: Transport;
  private readonly api: string;

  /** See the class comment. */
  constructor(
    providerUrl: string,
    private readonly options: ClaimClientOptions = {},
  ) {
    this.api = providerUrl.replace(/\/+$/, "");
    this.transport = options.transport ?? nodeTransport();
  }

  private async call<T>(
    method: string,
    path: string,
    token?: string | AgentSandbox,
    body?: unknown,
    proofKey?: DpopKey,
    extra: Record<string, string> = {},
  ): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json", ...extra };
    const url = `${this.api}${path}`;
    const key = typeof token === "object" && token.dpop_key !== undefined ? { privateJwk: token.dpop_key } : proofKey;
    if (key !== undefined) headers["dpop"] = dpopProof(key, method, url.split("?")[0] ?? url, Date.now());
    if (typeof token === "string") headers["authorization"] = `Bearer ${token}`;
    else if (token !== undefined) headers["authorization"] = `${key === undefined ? "Bearer" : "DPoP"} ${token.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await this.transport(method, url, headers, body === undefined ? undefined : JSON.stringify(body));
    const parsed = res.body === "" ? {} : (JSON.parse(res.body) as Record<string, unknown>);
    if (res.status >= 400) {
      const err = (parsed["error"] ?? {}) as { code?: string; message?: string };
      throw new ClaimClientError(
        `${method} ${path}: ${err.message ?? `http ${res.status}`}`,
        res.status,
        err.code ?? "unknown",
      );
    }
    return parsed as T;
  }

  /** `GET /.well-known/agent-access`. */
  discover(): Promise<Record<string, unknown>> {
    return this.call("GET", "/.well-known/agent-access");
  }

  /** Gets a challenge, solves it, creates a sandbox. */
  async createSandbox(metadata: Record<string, unknown> = {}): Promise<AgentSandbox> {
    const token = this.options.admissionToken;
    if (token !== undefined) {
      const d = await this.discover();
      const accepted = (d["sandbox"] as { admission?: unknown } | undefined)?.admission;
      if (!Array.isArray(accepted) || !accepted.includes("issuer_token"))
        throw new ClaimClientError("provider does not accept admission tokens", 0, "claim_unsupported");
    }
    const adm: Record<string, string> = token === undefined ? {} : { [ADMISSION_TOKEN_HEADER]: token };
    const c = await this.call<{ challenge: string; difficulty: number }>(
      "GET",
      "/v1/sandboxes/challenge",
      undefined,
      undefined,
      undefined,
      adm,
    ).catch(async (err: unknown) => {
      // The provider answers a missing token with the one failure; say why when its discovery says so.
      if (token !== undefined || !(err instanceof ClaimClientError) || err.code !== "not_found") throw err;
      const d: Record<string, unknown> = await this.discover().catch(() => ({}));
      if ((d["admission"] as { issuer_token?: unknown } | undefined)?.issuer_token !== "required") throw err;
      throw new ClaimClientError(
        "provider admits only agents with an admission token from an issuer it trusts (issuer-required)",
        0,
        "claim_unsupported",
      );
    });
    const key = this.options.dpop === false ? undefined : newDpopKey();
    type Created = {
      id: string;
      public_handle: string;
      expires_at: string;
      agent_token: { token: string; token_type?: string };
    };
    let ch = c;
    let s: Created;
    // The difficulty may rise while a challenge is solved (others creating from the same range): then the provider
    // answers 409 claim_challenge_stale, and a new challenge is solved (twice at most).
    for (let attempt = 0; ; attempt++) {
      const nonce = await solvePow(ch.challenge, ch.difficulty, this.options.solve);
      try {
        s = await this.call<Created>(
          "POST",
          "/v1/sandboxes",
          undefined,
          { admission: { type: "proof_of_work", challenge: ch.challenge, nonce }, metadata },
          key,
          adm,
        );
        break;
      } catch (err) {
        if (attempt >= 2 || !(err instanceof ClaimClientError) || err.code !== "claim_challenge_stale") throw err;
        ch = await this.call("GET", "/v1/sandboxes/challenge", undefined, undefined, undefined, adm);
      }
    }
    return {
      id: s.id,
      token: s.agent_token.token,
      public_handle: s.public_handle,
      expires_at: s.expires_at,
      api: this.api,
      ...(key !== undefined && s.agent_token.token_type === "DPoP" ? { dpop_key: key.privateJwk } : {}),
    };
  }

  /** `POST /v1/faqs`: creates a draft FAQ; returns its id. */
  async createFaq(sandbox: AgentSandbox, faq: FaqInput): Promise<string> {
    return (await this.call<{ faq_id: string }>("POST", "/v1/faqs", sandbox, faq)).faq_id;
  }

  /** `POST /v1/faqs/{id}/publish`. */
  publish(
    sandbox: AgentSandbox,
    faqId: string,
  ): Promise<{ published_url: string; previous_handle: string | null; new_handle: string; handle_rotated: boolean }> {
    return this.call("POST", `/v1/faqs/${encodeURIComponent(faqId)}/publish`, sandbox);
  }

  /** One call from nothing to a published FAQ: discovery, admission, sandbox, FAQ, publish. */
  async publishFaq(faq: FaqInput, metadata: Record<string, unknown> = {}): Promise<PublishedFaq> {
    const d = await this.discover();
    if (!(d["content_types"] as unknown[] | undefined)?.includes("faq"))
      throw new ClaimClientError("provider does not offer the `faq` content type", 0, "claim_unsupported");
    const sandbox = await this.createSandbox(metadata);
    const faqId = await this.createFaq(sandbox, faq);
    const p = await this.publish(sandbox, faqId);
    return {
      sandbox,
      faq_id: faqId,
      published_url: p.published_url,
      previous_handle: p.previous_handle,
      new_handle: p.new_handle,
    };
  }

  /** `POST /v1/sandboxes/{id}/claim`: a claim code and the page where the human enters it. */
  claimLink(sandbox: AgentSandbox): Promise<{ claim_code: string; claim_url: string; expires_at: string }> {
    return this.call("POST", `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/claim`, sandbox);
  }

  /** `POST /v1/sandboxes/{id}/preview`: a single-use exchange link (≤ 10 min) for a human. */
  previewLink(
    sandbox: AgentSandbox,
    surface: "preview" | "preview_admin" = "preview",
  ): Promise<{ exchange_url: string; expires_at: string }> {
    return this.call("POST", `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/preview`, sandbox, { surface });
  }

  /** `POST /v1/sandboxes/{id}/extend` (+24 h, at most twice). */
  extend(sandbox: AgentSandbox): Promise<{ expires_at: string; extensions: number }> {
    return this.call("POST", `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/extend`, sandbox);
  }

  /** `DELETE /v1/sandboxes/{id}`. */
  async delete(sandbox: AgentSandbox): Promise<void> {
    await this.call("DELETE", `/v1/sandboxes/${encodeURIComponent(sandbox.id)}`, sandbox);
  }
}
