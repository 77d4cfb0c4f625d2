import type { JsonWebKey } from "node:crypto";
import type { SolveOptions } from "../pow/solver.js";
import { dpopProof, newDpopKey, type DpopKey } from "../secrets/dpop.js";
import { nodeTransport, RESPONSE_LIMITS, type Transport } from "./transport.js";
import { ADMISSION_TOKEN_HEADER } from "../admission/admission-token.js";
import { ClaimClientError, printableExcerpt } from "./client-error.js";
import { AnswerReader, invalidAnswer, readAnswer } from "./provider-answer.js";
import { assertDifficulty, POW_LIMITS, SPEC_MAX_DIFFICULTY, solveWithin } from "./bounded-solve.js";

export { ClaimClientError };

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

/** Options of {@link ClaimClient}. */
export interface ClaimClientOptions {
  readonly transport?: Transport;
  /**
   * Allow a plain `http://` provider that is not on this machine (default false: refused with
   * `claim_insecure_provider`, since agent tokens, claim codes and preview links would cross the network
   * unencrypted). Loopback (`localhost`, `*.localhost`, `127.0.0.0/8`, `[::1]`) is always allowed.
   */
  readonly allowInsecureHttp?: boolean;
  readonly solve?: SolveOptions;
  /** Ask for a DPoP-bound agent token (default true; a provider without DPoP answers with a bearer token). */
  readonly dpop?: boolean;
  /**
   * An admission token from an issuer the provider trusts (§11.2), sent in `ACP-Admission-Token` on the challenge
   * and creation requests: lowers the proof-of-work difficulty, or is required by an `issuer-required` provider.
   */
  readonly admissionToken?: string;
  /**
   * Refuse (`claim_response_too_large`) an answer longer than this many bytes, cut off as it arrives (default
   * 1 MiB). Applies to a custom `transport` only once it has returned: such a transport caps its own reads.
   */
  readonly maxResponseBytes?: number;
  /**
   * Give up (`claim_timeout`) a request not answered in full within this many ms (default 30 000): the whole
   * exchange, so a provider trickling bytes is cut off too. A custom `transport` keeps its own time.
   */
  readonly requestTimeoutMs?: number;
  /**
   * Refuse (`claim_difficulty_refused`), before any work, a proof-of-work over this many bits (default 28, at most
   * 256: the spec's `sha256_leading_zeros` counts the bits of one SHA-256 digest).
   */
  readonly maxDifficulty?: number;
  /** Give up (`claim_timeout`) one proof-of-work solve after this many ms (default 600 000). */
  readonly solveTimeoutMs?: number;
}

/** The longest delay a Node timer keeps (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** An option's value: `fallback` when absent, a RangeError unless a whole number from 0 to `max`. */
function bounded(name: string, value: number | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0 || value > max)
    throw new RangeError(`ClaimClient: \`${name}\` must be a whole number from 0 to ${max}`);
  return value;
}

/** The host of a plain `http:` URL that is not loopback; undefined for https, loopback or no URL at all. */
function plainHttpHost(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined; // the request fails later with the transport's own error
  }
  if (u.protocol !== "http:") return undefined;
  const host = u.hostname.toLowerCase();
  const loopback =
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "[::1]" ||
    /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(host);
  return loopback ? undefined : host;
}

/**
 * The agent side of the Agent Claim Protocol: discovery → admission (proof-of-work solved with worker
 * threads) → sandbox → FAQ → publish → claim link. `providerUrl` is the API origin (e.g.
 * `http://api.localhost:8080`).
 */
export class ClaimClient {
  private readonly transport: Transport;
  private readonly api: string;
  private readonly maxBytes: number;
  private readonly maxDifficulty: number;
  private readonly solveTimeoutMs: number;
  /** Links in answers must be https once the provider is (no downgrade to plain http). */
  private readonly httpsOnly: boolean;

  /** See the class comment; an option out of range is a RangeError. */
  constructor(
    providerUrl: string,
    private readonly options: ClaimClientOptions = {},
  ) {
    this.api = providerUrl.replace(/\/+$/, "");
    this.httpsOnly = /^https:/i.test(this.api);
    const insecure = plainHttpHost(this.api);
    if (insecure !== undefined && options.allowInsecureHttp !== true)
      throw new ClaimClientError(
        `refusing plain http to \`${printableExcerpt(insecure, 100)}\`, which is not this machine: agent tokens and claim codes would cross the network unencrypted (use https://, or allow it explicitly)`,
        0,
        "claim_insecure_provider",
      );
    this.maxBytes = bounded("maxResponseBytes", options.maxResponseBytes, RESPONSE_LIMITS.maxBytes);
    const timeoutMs = bounded("requestTimeoutMs", options.requestTimeoutMs, RESPONSE_LIMITS.timeoutMs, MAX_TIMER_MS);
    this.maxDifficulty = bounded("maxDifficulty", options.maxDifficulty, POW_LIMITS.maxDifficulty, SPEC_MAX_DIFFICULTY);
    this.solveTimeoutMs = bounded("solveTimeoutMs", options.solveTimeoutMs, POW_LIMITS.solveTimeoutMs, MAX_TIMER_MS);
    this.transport = options.transport ?? nodeTransport({ maxResponseBytes: this.maxBytes, timeoutMs });
  }

  private async call(
    method: string,
    path: string,
    token?: string | AgentSandbox,
    body?: unknown,
    proofKey?: DpopKey,
    extra: Record<string, string> = {},
  ): Promise<AnswerReader> {
    const headers: Record<string, string> = { accept: "application/json", ...extra };
    const url = `${this.api}${path}`;
    const key = typeof token === "object" && token.dpop_key !== undefined ? { privateJwk: token.dpop_key } : proofKey;
    // A proof sent with the token carries its hash (`ath`); the creation's proof comes with none.
    const bound = typeof token === "object" ? token.token : undefined;
    if (key !== undefined) headers["dpop"] = dpopProof(key, method, url.split("?")[0] ?? url, Date.now(), bound);
    if (typeof token === "string") headers["authorization"] = `Bearer ${token}`;
    else if (token !== undefined) headers["authorization"] = `${key === undefined ? "Bearer" : "DPoP"} ${token.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await this.transport(method, url, headers, body === undefined ? undefined : JSON.stringify(body));
    const what = `${method} ${path}`;
    return new AnswerReader(readAnswer(res, what, new URL(url).host, this.maxBytes), what, this.httpsOnly);
  }

  /** `GET /.well-known/agent-access`. */
  async discover(): Promise<Record<string, unknown>> {
    return { ...(await this.call("GET", "/.well-known/agent-access")).answer };
  }

  /**
   * `GET /v1/sandboxes/challenge`, checked before any work: the one algorithm this client solves, a challenge
   * of 1–1024 printable characters, a difficulty the spec allows and at most `maxDifficulty`.
   */
  private async challenge(adm: Record<string, string>): Promise<{ challenge: string; difficulty: number }> {
    const r = await this.call("GET", "/v1/sandboxes/challenge", undefined, undefined, undefined, adm);
    const algorithm = r.answer["algorithm"];
    if (algorithm !== undefined && algorithm !== "sha256_leading_zeros")
      throw invalidAnswer(
        r.where,
        `the challenge is for \`${printableExcerpt(JSON.stringify(algorithm), 40)}\`; this client solves only sha256_leading_zeros`,
      );
    const challenge = r.text("challenge", 1024);
    return { challenge, difficulty: assertDifficulty(r.answer["difficulty"], this.maxDifficulty, r.where) };
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
    let ch = await this.challenge(adm).catch(async (err: unknown) => {
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
    let s: AnswerReader;
    // The difficulty may rise while a challenge is solved (others creating from the same range): then the provider
    // answers 409 claim_challenge_stale, and a new challenge is solved (three solves in all, at most).
    for (let attempt = 0; ; attempt++) {
      const nonce = await solveWithin(ch.challenge, ch.difficulty, this.options.solve, this.solveTimeoutMs);
      try {
        s = await this.call(
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
        const next = await this.challenge(adm);
        if (next.challenge === ch.challenge)
          throw invalidAnswer(
            "GET /v1/sandboxes/challenge",
            "provider handed out the same challenge it just called stale",
          );
        ch = next;
      }
    }
    const agentToken = s.object("agent_token");
    return {
      token: agentToken.token("token"),
      id: s.text("id"),
      public_handle: s.text("public_handle"),
      expires_at: s.text("expires_at", 64),
      api: this.api,
      ...(key !== undefined && agentToken.answer["token_type"] === "DPoP" ? { dpop_key: key.privateJwk } : {}),
    };
  }

  /** `POST /v1/faqs`: creates a draft FAQ; returns its id. */
  async createFaq(sandbox: AgentSandbox, faq: FaqInput): Promise<string> {
    return (await this.call("POST", "/v1/faqs", sandbox, faq)).text("faq_id");
  }

  /** `POST /v1/faqs/{id}/publish`. */
  async publish(
    sandbox: AgentSandbox,
    faqId: string,
  ): Promise<{ published_url: string; previous_handle: string | null; new_handle: string; handle_rotated: boolean }> {
    const r = await this.call("POST", `/v1/faqs/${encodeURIComponent(faqId)}/publish`, sandbox);
    return {
      published_url: r.url("published_url"),
      previous_handle: r.optionalText("previous_handle"),
      new_handle: r.text("new_handle"),
      handle_rotated: r.boolean("handle_rotated", false),
    };
  }

  /** One call from nothing to a published FAQ: discovery, admission, sandbox, FAQ, publish. */
  async publishFaq(faq: FaqInput, metadata: Record<string, unknown> = {}): Promise<PublishedFaq> {
    const types = (await this.discover())["content_types"];
    if (!Array.isArray(types) || !types.includes("faq"))
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
  async claimLink(sandbox: AgentSandbox): Promise<{ claim_code: string; claim_url: string; expires_at: string }> {
    const r = await this.call("POST", `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/claim`, sandbox);
    return { claim_code: r.text("claim_code"), claim_url: r.url("claim_url"), expires_at: r.text("expires_at", 64) };
  }

  /** `POST /v1/sandboxes/{id}/preview`: a single-use exchange link (≤ 10 min) for a human. */
  async previewLink(
    sandbox: AgentSandbox,
    surface: "preview" | "preview_admin" = "preview",
  ): Promise<{ exchange_url: string; expires_at: string }> {
    const r = await this.call("POST", `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/preview`, sandbox, { surface });
    return { exchange_url: r.url("exchange_url"), expires_at: r.text("expires_at", 64) };
  }

  /** `POST /v1/sandboxes/{id}/extend` (+24 h, at most twice). */
  async extend(sandbox: AgentSandbox): Promise<{ expires_at: string; extensions: number }> {
    const r = await this.call("POST", `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/extend`, sandbox);
    return { expires_at: r.text("expires_at", 64), extensions: r.integer("extensions", 0, 1000) };
  }

  /** `DELETE /v1/sandboxes/{id}`. */
  async delete(sandbox: AgentSandbox): Promise<void> {
    await this.call("DELETE", `/v1/sandboxes/${encodeURIComponent(sandbox.id)}`, sandbox);
  }
}
