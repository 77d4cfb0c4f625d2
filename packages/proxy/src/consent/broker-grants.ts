/**
 * The broker's approvals of wider scope (`session`, a time window): remembered when a person gives one,
 * reused (without asking) for a later call with the same server, tool and arguments, and shared through
 * the grant store between the proxies of a home or the nodes of `acp serve`.
 */
import type { AsyncConsentGrantStore, ConsentGrantStore } from "@acp/store";
import type { Redactor } from "@acp/core";
import type { BrokerAsk, BrokerOutcome, VerifyConsentResponse } from "./broker-types.js";
import { ApprovalGrants, grantKey, type ApprovalGrant } from "./grants.js";
import type { ConsentAgentInfo } from "./request.js";
import { restoreRedacted } from "./redact.js";
import { consentActionFields, type ConsentRecorder } from "./record.js";
import { describeScope } from "./scope.js";
import type { ApprovalScope, ConsentRequestV02, ConsentResponseV02 } from "./types.js";

/** What the broker's grants need (see `ConsentBrokerOptions` for each). */
export interface BrokerGrantsOptions {
  readonly clock: () => Date;
  readonly grants?: ConsentGrantStore | AsyncConsentGrantStore;
  readonly verifyGrant?: VerifyConsentResponse;
  readonly shareSessionGrants?: boolean;
  readonly agent?: ConsentAgentInfo;
}

/** An approval of wider scope as the broker remembers it. */
export interface RememberedGrant {
  readonly scope: Exclude<ApprovalScope, "once">;
  readonly arguments: Record<string, unknown>;
  readonly request: ConsentRequestV02;
  readonly response: ConsentResponseV02;
}

/** The arguments an approval forwards: the call's own, with the person's modifications (`[redacted]` kept). */
export function approvedArguments(ask: BrokerAsk, modifications: unknown, redact: Redactor): Record<string, unknown> {
  if (modifications === null || typeof modifications !== "object") return ask.arguments;
  return {
    ...ask.arguments,
    ...(restoreRedacted(ask.arguments, modifications, redact) as Record<string, unknown>),
  };
}

/** The broker's approvals of wider scope, in this process and (when configured) in the grant store. */
export class BrokerGrants {
  readonly #o: BrokerGrantsOptions;
  readonly #redact: Redactor;
  readonly #record: ConsentRecorder;
  readonly #grants = new ApprovalGrants();

  constructor(options: BrokerGrantsOptions, redact: Redactor, record: ConsentRecorder) {
    this.#o = options;
    this.#redact = redact;
    this.#record = record;
  }

  /** Remembers an approval of wider scope under the key of the call it answered. */
  async remember(ask: BrokerAsk, grant: RememberedGrant): Promise<void> {
    const key = grantKey(ask.server, ask.tool, ask.arguments, ask);
    if (key === null) return;
    const untilMs = Date.parse(grant.response.conditions.valid_until);
    this.#grants.add(key, { ...grant, sessionId: ask.sessionId, untilMs });
    const shared = typeof grant.scope === "object" || this.#o.shareSessionGrants === true;
    if (!shared || this.#o.grants === undefined || this.#o.verifyGrant === undefined) return;
    try {
      // the arguments are not kept: a reuse is for a call with the same ones (the key), modified as signed
      const stored = { request: grant.request, response: grant.response };
      await this.#o.grants.add(key, untilMs, stored, this.#o.clock().getTime());
    } catch {
      // kept in this process only
    }
  }

  /** The approval a remembered grant gives this call (recorded as `consent_approved`), or null: ask a person. */
  async reuse(ask: BrokerAsk): Promise<BrokerOutcome | null> {
    const key = grantKey(ask.server, ask.tool, ask.arguments, ask);
    if (key === null) return null;
    const now = this.#o.clock();
    // The grant's response was verified when it was given (a nonce-spending verifier would refuse it twice);
    // reuse only checks that it still covers this session and time. A window approval another proxy of the
    // home recorded is verified (signature and action) before its first use here.
    const grant = this.#grants.find(key, ask.sessionId, now.getTime()) ?? (await this.#stored(key, ask, now));
    if (grant === null) return null;
    // recorded as the call being decided: its agent (the grant's key holds it to the one it was given to);
    // the request the person approved is named apart
    const agent = ask.agent ?? this.#o.agent?.id ?? "unknown";
    const fields = {
      decision: grant.response.decision,
      scope: describeScope(grant.scope),
      // the one mark of a reused approval, as acp proxy's gate writes it (`reused_approval` until 27 Nov 2026)
      reused: true,
      approved_request_id: grant.request.id,
      approved_agent: (grant.request.agent as { id?: unknown } | undefined)?.id ?? null,
      consent_response: grant.response,
      ...consentActionFields(grant.request, grant.arguments),
    };
    const asked = { ...grant.request, agent: { ...grant.request.agent, id: agent } };
    if (!(await this.#record.event("consent_approved", ask, asked, fields))) return null;
    return {
      kind: "approved",
      arguments: grant.arguments,
      consentResponse: grant.response,
      scope: grant.scope,
      reused: true,
    };
  }

  /**
   * A window (or, with `shareSessionGrants`, session) approval another proxy of the home or node of the
   * service recorded for this call, verified; null when there is none.
   */
  async #stored(key: string, ask: BrokerAsk, now: Date): Promise<ApprovalGrant | null> {
    const store = this.#o.grants;
    const verify = this.#o.verifyGrant;
    if (store === undefined || verify === undefined) return null;
    let rows: unknown[];
    try {
      rows = await store.find(key, now.getTime());
    } catch {
      return null;
    }
    for (const row of rows) {
      const { request, response } = (row ?? {}) as { request?: ConsentRequestV02; response?: ConsentResponseV02 };
      if (typeof request !== "object" || request === null || typeof response !== "object" || response === null) {
        continue;
      }
      const conditions = (response as { conditions?: Partial<ConsentResponseV02["conditions"]> }).conditions;
      // scope and end come from the response, never from the row around it; a session approval covers
      // only calls of the session it names
      const session = conditions?.scope === "session" && this.#o.shareSessionGrants === true;
      if (conditions?.scope !== "window" && !session) continue;
      if (session && conditions.session_id !== ask.sessionId) continue;
      if (typeof conditions.valid_until !== "string") continue;
      if (response.decision !== "approved" && response.decision !== "approved_with_modifications") continue;
      const untilMs = Date.parse(conditions.valid_until);
      if (!(untilMs > now.getTime())) continue;
      let ok = false;
      try {
        const verdict = await verify({ response, request, arguments: ask.arguments, now });
        ok = verdict === true || (typeof verdict === "object" && verdict.ok === true);
      } catch {
        ok = false;
      }
      if (!ok) continue;
      const grant: ApprovalGrant = {
        scope: session ? "session" : { until: conditions.valid_until },
        sessionId: ask.sessionId,
        untilMs,
        arguments: approvedArguments(ask, response.modifications, this.#redact),
        request,
        response,
      };
      this.#grants.add(key, grant);
      return grant;
    }
    return null;
  }
}
