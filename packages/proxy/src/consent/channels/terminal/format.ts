import { timeLeft, type Reason } from "@acp/core";
import type { ConsentRequestV02 } from "../../types.js";

/**
 * Control characters (C0 including newline and tab, DEL, C1), the Unicode line and paragraph separators (a
 * line break in Telegram) and the Unicode bidirectional controls, each
 * shown as a `\uXXXX` escape. Tool names come from upstream servers and reasons can quote argument values:
 * raw, an escape sequence could erase or redraw what a person is asked to approve.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control character shown as a `\uXXXX` escape (see {@link UNPRINTABLE}). */
export function printable(text: unknown): string {
  return String(text).replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * What decided a request, for a person: the request's rule (``policy:ask-mail``, or ``default`` when the
 * policy's default action asked); when no rule decided and the first reason (the deciding source's, the
 * strictest verdict's reasons come first) is another source's, that source and its check
 * (``session (provenance_tainted)``) — ``default`` would read as if the policy's default had asked.
 */
export function decidedBy(ruleId: unknown, reasons: unknown): { readonly rule: boolean; readonly text: string } {
  const first: unknown = Array.isArray(reasons) ? reasons[0] : undefined;
  const reason = typeof first === "object" && first !== null ? (first as Partial<Reason>) : undefined;
  if (ruleId !== "default" || reason === undefined || reason.source === undefined || reason.source === "policy")
    return { rule: true, text: printable(ruleId) };
  const code = typeof reason.code === "string" ? ` (${printable(reason.code)})` : "";
  return { rule: false, text: `${printable(reason.source)}${code}` };
}

/**
 * The lines a person sees for one request: when it expires (and, given `now`, the time left to answer, as
 * `acp pending` says it: `expires …Z, in 4m 52s`), server, tool, arguments (redacted), category, risk, what
 * decided, reasons.
 */
export function formatRequestForTerminal(request: ConsentRequestV02, reasons: readonly Reason[], now?: Date): string {
  const { action, policy } = request;
  const decider = decidedBy(policy.rule_id, reasons);
  const end = Date.parse(request.expires_at);
  const left = now !== undefined && !Number.isNaN(end) ? `, ${timeLeft(end - now.getTime())}` : "";
  const lines = [
    "",
    `ACP consent request ${printable(request.id)} (expires ${printable(request.expires_at)}${left})`,
    `  server:    ${printable(action.server)}`,
    `  tool:      ${printable(action.tool)}`,
    `  category:  ${printable(action.category)}    risk: ${printable(action.risk_level)}`,
    decider.rule ? `  rule:      ${decider.text}` : `  asked by:  ${decider.text}`,
    `  agent:     ${printable(request.agent.name)}`,
    `  arguments: ${printable(JSON.stringify(action.parameters))}`,
  ];
  if (reasons.length > 0) {
    lines.push("  reasons:");
    for (const reason of reasons) {
      lines.push(`    - ${printable(reason.message)}${reason.rule ? ` (${printable(reason.rule)})` : ""}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** The question asked after the request. */
export const TERMINAL_PROMPT =
  "[a]pprove once, approve for this [s]ession, approve [f]or a time (f 10m), [e]dit arguments, [d]eny (d REASON)? ";

/** What a typed line means. */
export type TerminalCommand =
  | { readonly kind: "approve"; readonly scope: "once" | "session" }
  | { readonly kind: "window"; readonly duration: string }
  | { readonly kind: "edit" }
  | { readonly kind: "deny"; readonly reason?: string }
  | { readonly kind: "unknown"; readonly text: string };

/** Parses one typed line (case-insensitive; `a`, `approve`, `y`, `s`, `session`, `f 10m`, `e`, `d REASON`, …). */
export function parseTerminalCommand(line: string): TerminalCommand {
  const text = line.trim();
  const [word = "", ...rest] = text.split(/\s+/);
  const tail = rest.join(" ");
  switch (word.toLowerCase()) {
    case "a":
    case "approve":
    case "y":
    case "yes":
      return { kind: "approve", scope: "once" };
    case "s":
    case "session":
      return { kind: "approve", scope: "session" };
    case "f":
    case "for":
      return tail === "" ? { kind: "unknown", text } : { kind: "window", duration: tail };
    case "e":
    case "edit":
      return { kind: "edit" };
    case "d":
    case "deny":
    case "n":
    case "no":
      return tail === "" ? { kind: "deny" } : { kind: "deny", reason: tail.slice(0, 500) };
    default:
      return { kind: "unknown", text };
  }
}

/** The top-level keys of `edited` that differ from what was shown: the modifications to sign. */
export function modificationsOf(
  shown: Record<string, unknown>,
  edited: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(edited)) {
    if (JSON.stringify(value) !== JSON.stringify(shown[key])) out[key] = value;
  }
  return out;
}
