/**
 * Where an answer may come from besides the first channel to report one: an answer relayed through the
 * pending table (it names the channel the person used), an answer recorded there first by another channel
 * (arbitration), and an answer given in time but read only when the request expired (last look).
 */
import type { ArbiterVerdict, ConsentChannel, ConsentRequestV02, HumanAnswer } from "./types.js";

/** The channel a relayed answer names (`HumanAnswer.channel`), when it is a plain lowercase word. */
export function relayedChannel(answer: HumanAnswer): string | undefined {
  const channel: unknown = answer.channel;
  return typeof channel === "string" && /^[a-z][a-z0-9_-]{0,31}$/.test(channel) ? channel : undefined;
}

/** What arbitrating an answer through the channels that keep the shared record ended in. */
export type Arbitration =
  | { readonly kind: "recorded" }
  | { readonly kind: "taken"; readonly answer: HumanAnswer; readonly channel: ConsentChannel }
  | { readonly kind: "refused"; readonly reason: string };

/**
 * Has the channels that keep the request's shared record (the pending table) record an answer another
 * channel brought, before it is signed: the first answer recorded there is the one used, so a terminal's
 * `a` and an `acp deny` at the same moment end as one of them, told alike to both.
 */
export async function arbitrateAnswer(
  channels: readonly ConsentChannel[],
  request: ConsentRequestV02,
  answer: HumanAnswer,
  from: ConsentChannel,
  nowMs: number,
): Promise<Arbitration> {
  for (const channel of channels) {
    if (channel === from || channel.arbitrate === undefined) continue;
    let verdict: ArbiterVerdict;
    try {
      verdict = await channel.arbitrate(request, answer, relayedChannel(answer) ?? from.name, nowMs);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { kind: "refused", reason: `it could not be recorded by ${channel.name}: ${message}` };
    }
    if (verdict.kind === "taken") return { kind: "taken", answer: verdict.answer, channel };
    if (verdict.kind === "refused") return verdict;
  }
  return { kind: "recorded" };
}

/**
 * The first answer a channel still holds when the request's time ran out (see `ConsentChannel.lastLook`),
 * given no later than the request's expiry; undefined when none does.
 */
export async function lastLook(
  channels: readonly ConsentChannel[],
  request: ConsentRequestV02,
): Promise<{ answer: HumanAnswer; atMs: number; channel: ConsentChannel } | undefined> {
  const expiresAt = Date.parse(request.expires_at);
  for (const channel of channels) {
    if (channel.lastLook === undefined) continue;
    try {
      const found = await channel.lastLook(request);
      if (found !== undefined && found.atMs <= expiresAt) return { ...found, channel };
    } catch {
      // a channel that cannot look has nothing to add: the request expired
    }
  }
  return undefined;
}
