import { hasHiddenCharacters, printable, timeLeft, type Reason } from "@acp/core";
import type { ChannelSettlement, ConsentRequestV02 } from "../../types.js";
import { argumentsView, elide, lookAlikeIn, type LookAlike } from "../arguments-view.js";

export { hasHiddenCharacters, printable };

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

/** How much of the arguments the terminal prompt shows (a long value keeps its start and its end). */
export const TERMINAL_ARGUMENTS = { maxValue: 160, maxLines: 24 } as const;
/** The longest field (server, tool, agent, rule) shown whole (it keeps its start and its end). */
const MAX_FIELD = 200;
/** The longest field shown whole in {@link answeringLine}. */
const MAX_ANSWERING_FIELD = 80;
/** The longest reason shown whole (it keeps its start and its end). */
const MAX_REASON = 300;

/**
 * The lines a person sees for one request: when it expires (and, given `now`, the time left to answer, as
 * `acp pending` says it: `expires …Z, in 4m 52s`), server, tool, category, risk, what decided, the arguments
 * (redacted; one value a line, see {@link argumentsView}), reasons; and a warning line when any of it holds
 * characters shown escaped, or when the arguments were shortened.
 */
export function formatRequestForTerminal(request: ConsentRequestV02, reasons: readonly Reason[], now?: Date): string {
  const { action, policy } = request;
  const decider = decidedBy(policy.rule_id, reasons);
  const end = Date.parse(request.expires_at);
  const left = now !== undefined && !Number.isNaN(end) ? `, ${timeLeft(end - now.getTime())}` : "";
  const args = argumentsView(action.parameters, TERMINAL_ARGUMENTS);
  // a long field keeps its start and its end (`send_to_ana` + padding + `_and_mallory` shows both)
  const field = (value: unknown): string => elide(printable(value), MAX_FIELD);
  const lines = [
    "",
    `ACP consent request ${field(request.id)} (expires ${field(request.expires_at)}${left})`,
    `  server:    ${field(action.server)}`,
    `  tool:      ${field(action.tool)}`,
    `  category:  ${field(action.category)}    risk: ${field(action.risk_level)}`,
    decider.rule ? `  rule:      ${elide(decider.text, MAX_FIELD)}` : `  asked by:  ${elide(decider.text, MAX_FIELD)}`,
    `  agent:     ${field(request.agent.name)}`,
    "  arguments:",
    ...args.lines.map((line) => `    ${line}`),
  ];
  if (reasons.length > 0) {
    lines.push("  reasons:");
    for (const reason of reasons) {
      const rule = reason.rule ? ` (${printable(reason.rule)})` : "";
      lines.push(`    - ${elide(printable(reason.message), MAX_REASON)}${rule}`);
    }
  }
  const warnings = warningsOf(request, reasons, args);
  if (warnings.length > 0) lines.push(...warnings.map((w) => `  ! ${w}`));
  lines.push(`  ${answeringLine(request)}`);
  return `${lines.join("\n")}\n`;
}

/**
 * What became of an approval with edits, after the words naming it (and who gave it): `, but the edited arguments
 * are refused by …` (the reason, printable, kept to its start and end) or `; the edited arguments are asked again
 * (a new request follows)`; empty for any other end. The terminal and Telegram say it alike.
 */
export function editAftermath(outcome: ChannelSettlement, reason?: string): string {
  if (outcome === "edit_refused") {
    const why = reason === undefined || reason === "" ? "refused" : elide(printable(reason), MAX_REASON);
    return `, but the edited arguments are ${why}`;
  }
  if (outcome === "edit_asked") return "; the edited arguments are asked again (a new request follows)";
  return "";
}

/**
 * How a request ended, in words, as the terminal says it after an answer: the outcome (`approved`, `denied`,
 * `expired`, `withdrawn`), and for an approval with edits what became of the edit ({@link editAftermath}).
 */
export function settledWords(outcome: ChannelSettlement, reason?: string): string {
  const aftermath = editAftermath(outcome, reason);
  return aftermath === "" ? outcome : `approved with edits${aftermath}`;
}

/**
 * The last line before the buttons or the prompt, restating what is asked: `answering: tool send_email on server
 * mail (communication, risk high)`. Long arguments (24 values of up to 160 characters, wrapped) scroll the first
 * lines off a terminal, and what is left on screen above the prompt is the agent's: arguments laid out to read as
 * another tool's (`tool: "read_file"`) must not be all a person sees of the request when answering.
 */
export function answeringLine(request: ConsentRequestV02): string {
  // shorter than the fields above (they are there whole): a long one still keeps its start and its end
  const field = (value: unknown): string => elide(printable(value), MAX_ANSWERING_FIELD);
  const { action } = request;
  return (
    `answering: tool ${field(action.tool)} on server ${field(action.server)} ` +
    `(${field(action.category)}, risk ${field(action.risk_level)})`
  );
}

/**
 * What a person is warned of before answering: characters shown as escapes (where), and arguments shown
 * shortened. Shared by the terminal prompt and the Telegram message.
 */
export function warningsOf(
  request: ConsentRequestV02,
  reasons: readonly Reason[],
  args: { readonly hidden: boolean; readonly shortened: boolean; readonly lookAlike?: LookAlike },
): string[] {
  const { action } = request;
  const fields: [string, unknown][] = [
    ["server", action.server],
    ["tool", action.tool],
    ["agent", request.agent.name],
    ["rule", request.policy.rule_id],
  ];
  return warningsFor(fields, reasons, args);
}

/**
 * {@link warningsOf} for what a caller has at hand (`acp pending` reads rows): the named fields, the reasons
 * (their `message` and `rule`) and the arguments' view.
 */
export function warningsFor(
  fields: readonly (readonly [string, unknown])[],
  reasons: readonly unknown[],
  args: { readonly hidden: boolean; readonly shortened: boolean; readonly lookAlike?: LookAlike },
): string[] {
  const where = fields.filter(([, value]) => hasHiddenCharacters(value)).map(([name]) => name);
  if (args.hidden) where.push("arguments");
  const hiddenIn = (reason: unknown): boolean => {
    const r = (typeof reason === "object" && reason !== null ? reason : {}) as { message?: unknown; rule?: unknown };
    return hasHiddenCharacters(r.message ?? "") || hasHiddenCharacters(r.rule ?? "");
  };
  if (reasons.some(hiddenIn)) where.push("reasons");
  const out: string[] = [];
  if (where.length > 0) {
    out.push(
      `warning: invisible or control characters in ${where.join(", ")}, shown as \\uXXXX escapes: read them before approving`,
    );
  }
  const alike = fields.map(([name, value]) => [name, lookAlikeIn(value)] as const).find(([, found]) => found);
  const found = alike?.[1] ?? args.lookAlike;
  if (found?.script !== undefined) {
    const letters = / scripts?$/.test(found.script) ? `letters of ${found.script}` : `${found.script} letters`;
    out.push(
      `warning: a look-alike word in ${alike?.[0] ?? "arguments"}: \`${printable(found.char)}\` is written wholly in ${letters} and reads as \`${printable(found.reads)}\` but is not it`,
    );
  } else if (found !== undefined) {
    const code = [...found.char].map((c) => `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`);
    out.push(
      `warning: a look-alike letter in ${alike?.[0] ?? "arguments"}: \`${printable(found.char)}\` (${code.join(" ")}) reads as \`${printable(found.reads)}\` but is not it`,
    );
  }
  if (args.shortened) out.push("warning: long arguments are shortened here (…[N characters not shown]…)");
  return out;
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
