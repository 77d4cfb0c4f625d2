import type { Reason } from "@acp/core";
import type { ConsentRequestV02 } from "../../types.js";

/** The lines a person sees for one request: server, tool, arguments (redacted), category, risk, rule, reasons. */
export function formatRequestForTerminal(request: ConsentRequestV02, reasons: readonly Reason[]): string {
  const { action, policy } = request;
  const lines = [
    "",
    `ACP consent request ${request.id} (expires ${request.expires_at})`,
    `  server:    ${action.server}`,
    `  tool:      ${action.tool}`,
    `  category:  ${action.category}    risk: ${action.risk_level}`,
    `  rule:      ${policy.rule_id}`,
    `  agent:     ${request.agent.name}`,
    `  arguments: ${JSON.stringify(action.parameters)}`,
  ];
  if (reasons.length > 0) {
    lines.push("  reasons:");
    for (const reason of reasons) lines.push(`    - ${reason.message}${reason.rule ? ` (${reason.rule})` : ""}`);
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
