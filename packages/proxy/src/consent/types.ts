/**
 * The consent messages of the consent protocol §4 as the broker builds them, the human's answer as a channel
 * reports it, and the channel interface every consent channel implements.
 */
import type { Reason, RiskLevel } from "@acp/core";

/** The consent protocol version the broker writes. */
export const CONSENT_MESSAGE_VERSION = "0.2.0";

/** A consent request, §4.1. `action.parameters` are redacted for display (see `redactArguments`). */
export interface ConsentRequestV02 {
  readonly type: "consent_request";
  readonly version: "0.2.0";
  /** `cr_<32 hex>`. */
  readonly id: string;
  readonly timestamp: string;
  readonly expires_at: string;
  readonly agent: { readonly id: string; readonly name: string; readonly command: string };
  readonly action: {
    readonly tool: string;
    readonly server: string;
    readonly category: string;
    readonly risk_level: RiskLevel;
    readonly parameters: Record<string, unknown>;
    readonly description: string;
  };
  readonly policy: { readonly rule_id: string; readonly rule_name: string; readonly required_level: string };
  /** `n_<uuid>`. */
  readonly nonce: string;
}

/** The decisions of §4.2. */
export type ConsentDecisionKind = "approved" | "denied" | "approved_with_modifications";

/**
 * How far an approval reaches, chosen by the human: this call only (`once`, the default), the rest of this
 * session for the same server, tool and arguments (`session`), or the same server, tool and arguments until a
 * time (`{ until }`, from `--for 10m`).
 */
export type ApprovalScope = "once" | "session" | { readonly until: string };

/** `conditions` of §4.2, extended with the scope the human chose (recorded, so the proof carries it). */
export interface ConsentConditionsV02 {
  readonly valid_until: string;
  /** True exactly when the scope is `once`. */
  readonly single_use: boolean;
  readonly scope: "once" | "session" | "window";
  /** The session a `session` approval covers. */
  readonly session_id?: string;
}

/** A consent response before it is signed (§4.2 without `proof`). */
export interface UnsignedConsentResponseV02 {
  readonly type: "consent_response";
  readonly version: "0.2.0";
  readonly request_id: string;
  readonly timestamp: string;
  readonly decision: ConsentDecisionKind;
  readonly approver: { readonly id: string; readonly channel: string };
  /** Top-level argument overrides for `approved_with_modifications`, else null. */
  readonly modifications: Record<string, unknown> | null;
  readonly conditions: ConsentConditionsV02;
  readonly nonce: string;
  /** Why a person denied, when they said. */
  readonly reason?: string;
}

/** A signed consent response, §4.2. */
export interface ConsentResponseV02 extends UnsignedConsentResponseV02 {
  readonly proof: {
    readonly algorithm: string;
    readonly public_key: string;
    readonly signature: string;
    readonly signed_payload_hash: string;
  };
}

/** What a person answered, as a channel reports it (unsigned, not yet trusted). */
export interface HumanAnswer {
  readonly decision: ConsentDecisionKind;
  /** Top-level argument overrides; required for `approved_with_modifications`. */
  readonly modifications?: Record<string, unknown>;
  /** Defaults to `once`. */
  readonly scope?: ApprovalScope;
  /** Why, for a denial. */
  readonly reason?: string;
  /** Who answered, as the channel knows them (`telegram:12345`, `cli:alice`). */
  readonly approverId: string;
  /**
   * The channel the person answered through, when the channel that reports the answer only relayed it: a
   * Telegram press (or webhook callback) another proxy of the home received is recorded in the pending table
   * and reaches the proxy holding the request through its `cli` channel. Recorded as `approver.channel`
   * instead of the relaying channel's name. A lowercase word; anything else is ignored.
   */
  readonly channel?: string;
  /**
   * When the person answered (ms since the epoch), as the channel recorded it: the row's `decided_at`, the
   * moment a typed line, a callback or a button press reached it. The broker stamps the response with it when
   * it lies between the request's creation and the moment it reads the answer (else with that moment), and
   * does not use an answer stamped after the request expired. Optional: without it, the read time.
   */
  readonly answeredAtMs?: number;
}

/** Who ended a request a person answered, told to the channels with how it ended. */
export interface SettledBy {
  /** As the answer named them (`telegram:12345`, `cli:alice`). */
  readonly approverId: string;
  /** The channel they answered through (`approver.channel`). */
  readonly channel: string;
}

/** What a channel is handed for one request. */
export interface ChannelDelivery {
  /** The consent request, parameters redacted. */
  readonly request: ConsentRequestV02;
  /** Why the pipeline asked. */
  readonly reasons: readonly Reason[];
  /** The session the call belongs to. */
  readonly sessionId: string;
  /** Aborted when the request is answered elsewhere, expires or is withdrawn: stop asking. */
  readonly signal: AbortSignal;
}

/**
 * How a request ended, told to every channel it was delivered to (to edit a message, close a row, …). A person
 * who approved with edits may see their edit refused by the standing rules (`edit_refused`, the reason says
 * which) or put to a person again as a new question (`edit_asked`, which the new request follows).
 */
export type ChannelSettlement = "approved" | "denied" | "expired" | "withdrawn" | "edit_refused" | "edit_asked";

/**
 * How a pending-table row is closed for each settlement: an approval whose edit the recheck refused did not
 * run (`denied`); one whose edit is asked again was taken (`approved`; the new question has a row of its own).
 */
export function rowStatusOf(outcome: ChannelSettlement): "approved" | "denied" | "expired" | "withdrawn" {
  if (outcome === "edit_refused") return "denied";
  if (outcome === "edit_asked") return "approved";
  return outcome;
}

/**
 * A consent channel: puts a request before a person and reports their answer. Channels do not sign or
 * decide; the broker turns the answer into a signed, verified consent response.
 */
export interface ConsentChannel {
  /** Recorded as `approver.channel`: `cli`, `terminal`, `webhook`, `telegram`. */
  readonly name: string;
  /** Whether the channel can reach a person now (a terminal exists, a token is configured…). Must not hang. */
  isAvailable(): boolean | Promise<boolean>;
  /**
   * Delivers the request and resolves with the person's answer. Rejects when delivery fails, and when
   * `delivery.signal` aborts (the broker then ignores it).
   */
  deliver(delivery: ChannelDelivery): Promise<HumanAnswer>;
  /**
   * Told how the request ended, whoever answered, and — when a person answered (approved, or denied with a
   * signed response) — who and through which channel; for `edit_refused`, why (secrets redacted). Optional;
   * errors are ignored.
   */
  settle?(
    request: ConsentRequestV02,
    outcome: ChannelSettlement,
    by?: SettledBy,
    reason?: string,
  ): void | Promise<void>;
  /**
   * Asked once when the request's time runs out, before it is concluded expired: an answer the person gave
   * in time that the channel has not reported yet (`acp approve` wrote the row between two reads), with when
   * it was given (ms). Optional; an error counts as none.
   */
  lastLook?(
    request: ConsentRequestV02,
  ):
    | { readonly answer: HumanAnswer; readonly atMs: number }
    | undefined
    | Promise<{ readonly answer: HumanAnswer; readonly atMs: number } | undefined>;
  /**
   * Records an answer another channel brought (`via`: the channel it came through) where this channel keeps
   * the request's shared record — the pending table `acp approve` / `acp deny` write — atomically, before the
   * broker signs it; so two people answering at once through different channels (a terminal `a` and an
   * `acp deny`) cannot both be told that their answer counted. `taken`: the record already holds an answer,
   * which wins instead; `refused`: the record can take no answer (the request ended there). Optional; an error
   * refuses (the answer is not used).
   */
  arbitrate?(
    request: ConsentRequestV02,
    answer: HumanAnswer,
    via: string,
    atMs: number,
  ): ArbiterVerdict | Promise<ArbiterVerdict>;
  /** Releases what the channel holds (pollers, bots, terminals). */
  close?(): void | Promise<void>;
}

/** What a channel keeping the shared record said of an answer another channel brought (`arbitrate`). */
export type ArbiterVerdict =
  | { readonly kind: "recorded" }
  | { readonly kind: "taken"; readonly answer: HumanAnswer }
  | { readonly kind: "refused"; readonly reason: string };
