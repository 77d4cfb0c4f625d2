/**
 * The broker's contract: the proxy's seam (`ConsentAsk` / `ConsentOutcome` / `AuditSink` of
 * `packages/proxy/src/gate/types.ts`) and the injected signing and verification functions.
 */
import type { AuditSink, ConsentAsk, ConsentOutcome } from "../gate/types.js";
import type { ConsentRequestV02, ConsentResponseV02, UnsignedConsentResponseV02 } from "./types.js";

/** One ask/defer decision put before a person: the proxy's `ConsentAsk`. */
export type BrokerAsk = ConsentAsk;

/** How it ended: the proxy's `ConsentOutcome`. */
export type BrokerOutcome = ConsentOutcome;

/** Signs a response (Ed25519 over the §6.2 payload); `args` are the real arguments the request was made for. */
export type SignConsentResponse = (input: {
  readonly response: UnsignedConsentResponseV02;
  readonly request: ConsentRequestV02;
  readonly arguments: Readonly<Record<string, unknown>>;
}) => ConsentResponseV02 | Promise<ConsentResponseV02>;

/**
 * Verifies a signed response against the request it answers (signature with the trusted public key, nonce,
 * request id, `valid_until` against `now`). `true` or `{ ok: true }` passes; anything else refuses.
 */
export type VerifyConsentResponse = (input: {
  readonly response: ConsentResponseV02;
  readonly request: ConsentRequestV02;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly now: Date;
}) => boolean | { readonly ok: boolean } | Promise<boolean | { readonly ok: boolean }>;

/** Where the broker records consent events: the proxy's `AuditSink`. */
export type ConsentAuditSink = AuditSink;
