import type { Reason } from "@acp/core";
import type { ChannelSettlement, ConsentRequestV02 } from "../../types.js";
import { argumentsView, elide } from "../arguments-view.js";
import { answeringLine, decidedBy, editAftermath, printable, warningsOf } from "../terminal/format.js";

/** Telegram's limit on a message's text. */
const MAX_TEXT = 4096;
/** Room kept for the line the message gets when the request ends. */
const SETTLED_ROOM = 100;
const MAX_FIELD = 200;
const MAX_REASON = 200;
const MAX_REASONS = 8;

/** `text` cut to at most `max` UTF-16 units (marked), never between the halves of a surrogate pair. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const mark = "… (truncated)";
  let end = Math.max(0, max - mark.length);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}${mark}`;
}

/** How much of the arguments a Telegram message shows at most (the message's budget may cut it shorter). */
const TELEGRAM_ARGUMENTS = { maxValue: 120, maxLines: 24 } as const;
/** Room kept for the line counting the values left out. */
const COUNT_ROOM = 60;
/**
 * What each argument line starts with. The message's own lines are flush left (`tool: send_email`), and an
 * argument's path can be any key (`tool: "read_file"`, `rule: null`); a path never starts with `•` (a plain key
 * starts with a letter, `_` or `$`, any other is `["…"]`), so no argument line passes for one of the message's.
 * It opens with U+200E LEFT-TO-RIGHT MARK: the line reads left to right whatever follows (see {@link isolated}).
 */
const ARGUMENT_MARK = "\u200e• ";
/** What each reason line starts with (as {@link ARGUMENT_MARK}, left to right whatever the reason says). */
const REASON_MARK = "\u200e- ";
/** U+2066 LEFT-TO-RIGHT ISOLATE and U+2069 POP DIRECTIONAL ISOLATE. */
const LRI = "\u2066";
const PDI = "\u2069";

/**
 * `text` (printable) between U+2066 LEFT-TO-RIGHT ISOLATE and U+2069 POP DIRECTIONAL ISOLATE. A Telegram client
 * lays each line out by the Unicode bidirectional algorithm: a line whose first letter is Arabic or Hebrew reads
 * right to left (its mark moved to the other end), and between two right-to-left runs the characters that have
 * no direction of their own (`"`, `]`, `:`, spaces) are reversed with them, so `["א"]: "ב"` could show as
 * `"ב" :["א"]`, a key read as the value. An isolate is laid out on its own, as one neutral character to the text
 * around it, and left to right inside: nothing in it moves what is outside it. {@link printable} shows every
 * bidirectional control as an escape, so the agent's text cannot close the isolate early.
 */
export function isolated(text: string): string {
  return `${LRI}${text}${PDI}`;
}

/** An argument's line: the mark, then its path and its value each isolated (a value alone when it has no path). */
function argumentLine(item: { readonly path: string; readonly value: string }): string {
  const value = isolated(item.value);
  return `${ARGUMENT_MARK}${item.path === "" ? value : `${isolated(item.path)}: ${value}`}`;
}

/** What each argument line adds to its `path: value`: the mark and two isolates. */
const LINE_EXTRA = ARGUMENT_MARK.length + 2 * (LRI.length + PDI.length);

/**
 * The plain-text message a request is sent as (arguments already redacted in the request; no parse mode, so
 * nothing in it is markup). Every field is shown printable (a tool name is the upstream's, a reason may quote
 * an argument: neither can add lines, reorder text or hide a character) and cut to its share; the arguments one
 * value a line, each cut in its middle when long (see {@link argumentsView}), as many as the room left holds
 * and the rest counted, so one long value cannot push the others out of the message, each marked `• ` so none
 * reads as a field of the message and its path and value isolated (see {@link isolated}); then the reasons (each
 * isolated too), a warning when anything holds escaped characters or was
 * shortened, the expiry, the id and the line restating what is answered (see {@link answeringLine}), all within
 * Telegram's 4096 characters, with room for the line added when the request ends.
 */
export function formatTelegramMessage(request: ConsentRequestV02, reasons: readonly Reason[]): string {
  const { action } = request;
  // a long field keeps its start and its end: a tool named `send_to_ana` + padding + `_and_mallory` shows both
  const field = (value: unknown): string => elide(printable(value), MAX_FIELD);
  // a request the session runtime asked names it and its check, not the policy's `default`
  const decider = decidedBy(request.policy.rule_id, reasons);
  const head = [
    "ACP consent request",
    `server: ${field(action.server)}`,
    `tool: ${field(action.tool)}`,
    `category: ${field(action.category)} · risk: ${field(action.risk_level)}`,
    decider.rule ? `rule: ${field(request.policy.rule_id)}` : `asked by: ${elide(decider.text, MAX_FIELD)}`,
    `agent: ${field(request.agent.name)}`,
  ];
  const tail: string[] = [];
  if (reasons.length > 0) {
    const reasonLine = (r: Reason): string => `${REASON_MARK}${isolated(elide(printable(r.message), MAX_REASON))}`;
    tail.push("reasons:", ...reasons.slice(0, MAX_REASONS).map(reasonLine));
    if (reasons.length > MAX_REASONS) tail.push(`${REASON_MARK}… and ${reasons.length - MAX_REASONS} more`);
  }
  const end = [`expires: ${field(request.expires_at)}`, `id: ${field(request.id)}`, answeringLine(request)];
  const fixed = [...head, ...tail, ...end].join("\n").length + "\narguments:\n".length + WARNINGS_ROOM + 100;
  const marks = TELEGRAM_ARGUMENTS.maxLines * LINE_EXTRA;
  const budget = Math.max(0, MAX_TEXT - SETTLED_ROOM - fixed - COUNT_ROOM - marks);
  const args = argumentsView(action.parameters, { ...TELEGRAM_ARGUMENTS, maxChars: budget });
  tail.push(...warningsOf(request, reasons, args), ...end);
  // each argument line marked (no path starts with it): an argument `tool: "read_file"` is not a field of the
  // message; its path and value each isolated, so right-to-left text in them moves nothing outside them
  const shown = [...args.items.map(argumentLine), ...(args.more !== undefined ? [`${ARGUMENT_MARK}${args.more}`] : [])];
  // at most 8 fields and 9 reason lines of ~200 and the closing line of ~370: the arguments keep at least a few hundred characters; the
  // cut is a backstop
  return clip([...head, "arguments:", ...shown, ...tail].join("\n"), MAX_TEXT - SETTLED_ROOM);
}

/** Room kept for the warning lines. */
const WARNINGS_ROOM = 260;

const LABELS: Record<ChannelSettlement, string> = {
  approved: "✅ approved",
  denied: "❌ denied",
  expired: "⌛ expired: nobody answered in time (denied)",
  withdrawn: "↩️ withdrawn: the agent cancelled the call",
  edit_refused: "⛔ approved with edits",
  edit_asked: "✏️ approved with edits",
};

/** Most characters of a settled line: Telegram's limit on the text a button press is answered with. */
const MAX_SETTLED_LINE = 200;

/**
 * Who answered, as the message names them: the name Telegram gave for a press this channel received
 * (``Ana (4242)``), else the approver id without its channel prefix (``alice`` for `cli:alice`); and the
 * channel they answered through.
 */
export interface SettledByText {
  readonly who: string;
  readonly channel: string;
}

/**
 * How the request ended, one line: the outcome and, for a person's answer, who gave it through which channel
 * (the last line of the settled message, and what the person who pressed a button is told).
 */
export function settledLine(
  outcome: ChannelSettlement,
  by?: SettledByText,
  reason?: string,
  max = MAX_SETTLED_LINE,
): string {
  const who = by === undefined ? "" : ` by ${clip(printable(by.who), 48)} via ${clip(printable(by.channel), 16)}`;
  return clip(`${LABELS[outcome]}${who}${editAftermath(outcome, reason)}`, max);
}

/**
 * The message text once the request has ended; a person's answer says who gave it and through which channel,
 * a refused edit why (as much as fits Telegram's limit: the request's text left room for a short line).
 */
export function formatSettledMessage(
  original: string,
  outcome: ChannelSettlement,
  by?: SettledByText,
  reason?: string,
): string {
  const room = Math.max(0, MAX_TEXT - original.length - 2);
  return `${original}\n\n${settledLine(outcome, by, reason, Math.min(room, 600))}`;
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
