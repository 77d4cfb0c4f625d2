import type { Reason } from "@acp/core";
import type { ChannelSettlement, ConsentRequestV02 } from "../../types.js";
import { printable } from "../terminal/format.js";

/** Telegram's limit on a message's text. */
const MAX_TEXT = 4096;
const MAX_ARGUMENTS = 2500;

/** The plain-text message a request is sent as (arguments already redacted in the request). */
export function formatTelegramMessage(request: ConsentRequestV02, reasons: readonly Reason[]): string {
  const { action } = request;
  let args = JSON.stringify(action.parameters, null, 1);
  if (args.length > MAX_ARGUMENTS) args = `${args.slice(0, MAX_ARGUMENTS)}… (truncated)`;
  // a tool name (the upstream's) or a reason (which may quote an argument) cannot add lines or reorder text
  const p = printable;
  const lines = [
    "ACP consent request",
    `server: ${p(action.server)}`,
    `tool: ${p(action.tool)}`,
    `category: ${p(action.category)} · risk: ${p(action.risk_level)}`,
    `rule: ${p(request.policy.rule_id)}`,
    `agent: ${p(request.agent.name)}`,
    // the pretty-printed JSON's own line breaks stay; JSON has already escaped those inside values
    `arguments: ${args.split("\n").map(p).join("\n")}`,
  ];
  if (reasons.length > 0) lines.push("reasons:", ...reasons.slice(0, 10).map((r) => `- ${p(r.message)}`));
  lines.push(`expires: ${request.expires_at}`, `id: ${request.id}`);
  return lines.join("\n").slice(0, MAX_TEXT - 100);
}

const LABELS: Record<ChannelSettlement, string> = {
  approved: "✅ approved",
  denied: "❌ denied",
  expired: "⌛ expired: nobody answered in time (denied)",
  withdrawn: "↩️ withdrawn: the agent cancelled the call",
};

/** The message text once the request has ended. */
export function formatSettledMessage(original: string, outcome: ChannelSettlement): string {
  return `${original}\n\n${LABELS[outcome]}`;
}

/** The button actions: approve once, approve for the session, deny. */
export type TelegramButton = "a" | "s" | "d";

/** `callback_data` of a button (≤ 64 bytes): `acp:<a|s|d>:<request id>`. */
export function callbackDataOf(button: TelegramButton, requestId: string): string {
  return `acp:${button}:${requestId}`;
}

/** Parses `callback_data`; null when it is not one of ours. */
export function parseCallbackData(data: string): { button: TelegramButton; requestId: string } | null {
  const match = /^acp:([asd]):(cr_[0-9a-f]{32})$/.exec(data);
  if (match === null) return null;
  return { button: match[1] as TelegramButton, requestId: match[2] as string };
}

/** The inline keyboard sent with a request. */
export function keyboardOf(requestId: string): { inline_keyboard: { text: string; callback_data: string }[][] } {
  return {
    inline_keyboard: [
      [
        { text: "✅ Approve", callback_data: callbackDataOf("a", requestId) },
        { text: "🔁 Approve for session", callback_data: callbackDataOf("s", requestId) },
      ],
      [{ text: "❌ Deny", callback_data: callbackDataOf("d", requestId) }],
    ],
  };
}
