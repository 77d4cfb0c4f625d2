/**
 * Test fixtures for the consent broker and channels: a manual clock and timers, an Ed25519 signer and verifier
 * of the §6.2 payload (a stand-in until the core proof module is wired by the integrator), and asks.
 */
import { generateKeyPairSync, sign as edSign, verify as edVerify, type KeyObject } from "node:crypto";
import { canonicalJson, canonicalSha256Ref, sha256Ref, type Decision } from "@acp/core";
import {
  createConsentBroker,
  type ConsentBrokerHandle,
  type ConsentBrokerOptions,
  type ConsentChannel,
  type ConsentRequestV02,
  type ConsentResponseV02,
  type ConsentTimers,
  type SignConsentResponse,
  type UnsignedConsentResponseV02,
  type VerifyConsentResponse,
} from "../../src/consent/index.js";
import type { ConsentAsk } from "../../src/gate/types.js";
import type { JudgeEdited } from "../../src/gate/edit-judgement.js";

/** A clock the test moves, and timers that fire when the test advances it. */
export class ManualTime implements ConsentTimers {
  #now: number;
  #next = 1;
  readonly #due = new Map<number, { at: number; callback: () => void }>();

  constructor(start = Date.parse("2026-01-15T12:00:00.000Z")) {
    this.#now = start;
  }

  readonly clock = (): Date => new Date(this.#now);

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#due.set(id, { at: this.#now + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#due.delete(handle as number);
  }

  /** Moves the clock and fires every timer that came due, in order. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const next = [...this.#due.entries()].filter(([, t]) => t.at <= target).sort((a, b) => a[1].at - b[1].at)[0];
      if (next === undefined) break;
      this.#due.delete(next[0]);
      this.#now = Math.max(this.#now, next[1].at);
      next[1].callback();
    }
    this.#now = target;
  }
}

/** Deterministic "random" bytes: a counter, so ids and nonces differ and replay the same. */
export function countingRandom(): (size: number) => Uint8Array {
  let n = 0;
  return (size) => {
    n++;
    const out = new Uint8Array(size);
    for (let i = 0; i < size; i++) out[i] = (n * 31 + i * 7) & 0xff;
    return out;
  };
}

function payloadOf(response: UnsignedConsentResponseV02, request: ConsentRequestV02, args: unknown): Uint8Array {
  const payload = {
    action_hash: canonicalSha256Ref({ server: request.action.server, tool: request.action.tool, parameters: args }),
    decision: response.decision,
    modifications_hash: response.modifications === null ? null : canonicalSha256Ref(response.modifications),
    nonce: response.nonce,
    request_id: response.request_id,
    timestamp: response.timestamp,
    valid_until: response.conditions.valid_until,
    conditions_hash: canonicalSha256Ref(response.conditions),
  };
  return new TextEncoder().encode(canonicalJson(payload));
}

/** An Ed25519 key pair with a §6.2-style signer and verifier (the scope in `conditions` is signed too). */
export function createTestProofs(): {
  sign: SignConsentResponse;
  verify: VerifyConsentResponse;
  publicKey: KeyObject;
  verifyWith: (
    publicKey: KeyObject,
    response: ConsentResponseV02,
    request: ConsentRequestV02,
    args: unknown,
  ) => boolean;
} {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const publicHex = Buffer.from(publicKey.export({ format: "jwk" }).x ?? "", "base64url").toString("hex");
  const verifyWith = (key: KeyObject, response: ConsentResponseV02, request: ConsentRequestV02, args: unknown) => {
    const { proof, ...unsigned } = response;
    const bytes = payloadOf(unsigned, request, args);
    if (proof.signed_payload_hash !== sha256Ref(bytes)) return false;
    return edVerify(null, bytes, key, Buffer.from(proof.signature, "hex"));
  };
  return {
    publicKey,
    verifyWith,
    sign: ({ response, request, arguments: args }) => {
      const bytes = payloadOf(response, request, args);
      const signature = edSign(null, bytes, privateKey).toString("hex");
      const proof = { algorithm: "Ed25519", public_key: publicHex, signature, signed_payload_hash: sha256Ref(bytes) };
      return { ...response, proof };
    },
    verify: ({ response, request, arguments: args, now }) =>
      verifyWith(publicKey, response, request, args) &&
      Date.parse(response.conditions.valid_until) > now.getTime() &&
      response.nonce === request.nonce,
  };
}

/** An ask decision as the pipeline would give it. */
export function askDecision(overrides: Partial<Decision> = {}): Decision {
  return {
    route: "ask",
    action: "ask",
    rule: "policy:ask-writes",
    category: "write",
    risk_level: "medium",
    reasons: [
      { source: "policy", code: "rule_matched", message: "rule `ask-writes` asks before writes", rule: "ask-writes" },
    ],
    verdicts: [],
    timeout: 120,
    ...overrides,
  };
}

/** A token-shaped secret a refusal's reason quotes: a channel shows it redacted. */
export const PLANTED_TOKEN = "sk-live-0123456789abcdefghijklmnop";

/**
 * A caller's judgement of edited arguments (`ConsentAsk.judgeEdited`): a `path` under `/etc/` is refused by
 * policy rule `no-etc` (its reason quotes the edited path and {@link PLANTED_TOKEN}), anything else stands.
 */
export function refuseEditsUnderEtc(calls: Record<string, unknown>[] = []): JudgeEdited {
  return (edited) => {
    calls.push(edited);
    const path = String(edited["path"]);
    if (!path.startsWith("/etc/")) return Promise.resolve({ kind: "stands" });
    const message = `rule \`no-etc\` matched: deny (path ${path}, with Bearer ${PLANTED_TOKEN})`;
    return Promise.resolve({
      kind: "refused",
      decision: askDecision({
        route: "refuse",
        action: "deny",
        rule: "policy:no-etc",
        reasons: [{ source: "policy", code: "rule_matched", message, rule: "no-etc" }],
        verdicts: [{ source: "policy", route: "refuse", reasons: [] }],
      }),
    });
  };
}

/** A consent ask for `write_file` on `fs`. */
export function makeAsk(overrides: Partial<ConsentAsk> = {}): ConsentAsk {
  return {
    server: "fs",
    tool: "write_file",
    arguments: { path: "/tmp/notes.txt", content: "hello", api_token: "s3cret-value" },
    decision: askDecision(),
    sessionId: "session-1",
    agent: "test-agent",
    timeoutMs: 120_000,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** Polls `probe` until it returns a value (not undefined/null/false); the test's own timeout bounds it. */
export async function eventually<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * A broker on `channels` with fresh test keys, on the test's manual clock and timers, with counting ids and no
 * progress notices; `extra` adds or overrides options.
 */
export function manualBroker(
  channels: readonly ConsentChannel[],
  time: ManualTime,
  extra: Partial<ConsentBrokerOptions> = {},
): ConsentBrokerHandle {
  return createConsentBroker({
    channels,
    ...createTestProofs(),
    clock: time.clock,
    timers: time,
    random: countingRandom(),
    progressIntervalMs: 0,
    ...extra,
  });
}
