import { generateKeyPairSync, type KeyObject } from "node:crypto";
import {
  buildAuditEvent,
  createCheckpointBody,
  createCheckpointInput,
  serializeAuditEvent,
  signCheckpoint,
  type AuditEventInput,
  type AuditEventV02,
  type CheckpointSigner,
} from "../../src/audit/index.js";

/** An Ed25519 key pair for tests. */
export function testKeys(): { privateKey: KeyObject; publicKey: KeyObject; publicHex: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const jwk = publicKey.export({ format: "jwk" });
  return { privateKey, publicKey, publicHex: Buffer.from(jwk.x ?? "", "base64url").toString("hex") };
}

/** Builds chains in memory the way the writer does, with a deterministic clock and ids. */
export class ChainBuilder {
  readonly events: AuditEventV02[] = [];
  private tick = 0;

  constructor(private readonly signer?: CheckpointSigner) {}

  private placement(): { id: string; timestamp: string; previousEventHash: string | null } {
    this.tick++;
    const timestamp = new Date(Date.UTC(2026, 0, 15, 12, 0, 0, this.tick)).toISOString();
    return { id: `ae_${String(this.tick).padStart(6, "0")}`, timestamp, previousEventHash: this.head() };
  }

  head(): string | null {
    return this.events.at(-1)?.event_hash ?? null;
  }

  append(input: AuditEventInput): AuditEventV02 {
    const event = buildAuditEvent(input, this.placement());
    this.events.push(event);
    return event;
  }

  checkpoint(signer: CheckpointSigner | undefined = this.signer): AuditEventV02 {
    if (signer === undefined) throw new Error("no signer");
    const place = this.placement();
    const body = createCheckpointBody(this.head(), this.events.length, place.timestamp);
    const event = buildAuditEvent(createCheckpointInput({ body, signature: signCheckpoint(body, signer) }), place);
    this.events.push(event);
    return event;
  }

  lines(): string[] {
    return this.events.map(serializeAuditEvent);
  }
}

/** A typical decision: intercepted, evaluated, forwarded, completed. */
export function sampleInput(n: number): AuditEventInput {
  const types = ["tool_call_intercepted", "policy_evaluated", "tool_call_forwarded", "tool_call_completed"] as const;
  return {
    event_type: types[n % types.length] ?? "tool_call_intercepted",
    request_id: `cr_${Math.floor(n / 4)}`,
    agent: "claude",
    tool: "send_email",
    category: "communication",
    risk_level: "medium",
    decision: n % 4 === 1 ? "ask" : null,
    response_time_ms: n % 4 === 3 ? 12 : null,
    policy_rule: n % 4 === 1 ? "ask-before-send" : null,
    metadata: { parameters: { to: "a@example.com", n } },
  };
}

/** A chain of `n` events with a signed checkpoint every `every` events and one at the end. */
export function sampleChain(n: number, every: number, signer: CheckpointSigner): ChainBuilder {
  const chain = new ChainBuilder(signer);
  for (let i = 0; i < n; i++) {
    chain.append(sampleInput(i));
    if ((i + 1) % every === 0) chain.checkpoint();
  }
  chain.checkpoint();
  return chain;
}
