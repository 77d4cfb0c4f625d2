import type { Issue, Result } from "@acp/core";

/**
 * Replay traces: JSON lines, one event each, as an agent session saw them. The format is documented in
 * docs/reference/cli/replay.md; this file is its one parser.
 */

/** Provenance labels a `tool_result` event may carry to override the server's trust. */
export const PROVENANCE_LABELS = ["system_policy", "user_input", "external_untrusted"] as const;
/** A provenance label (see the session runtime). */
export type ProvenanceLabel = (typeof PROVENANCE_LABELS)[number];

/** Event types a trace may hold; any other `type` is an error. */
export const TRACE_EVENT_TYPES = ["user_input", "tool_call", "tool_result"] as const;

/** Limits on one trace; anything beyond is an error, never a partial replay. */
export const TRACE_LIMITS = {
  /** Largest trace file, in bytes (checked before reading). */
  maxFileBytes: 16 * 1024 * 1024,
  /** Longest line, in characters. */
  maxLineChars: 4 * 1024 * 1024,
  /** Most events in one trace. */
  maxEvents: 100_000,
} as const;

/** What the person (or the agent's user) typed. */
export interface UserInputEvent {
  readonly type: "user_input";
  readonly text: string;
  /** 1-based line in the trace file (0 when the event did not come from a file). */
  readonly line: number;
}

/** A tool call the agent proposed. */
export interface ToolCallEvent {
  readonly type: "tool_call";
  readonly server: string;
  readonly tool: string;
  /** The call's arguments; `{}` when the event has no `args`. */
  readonly args: Readonly<Record<string, unknown>>;
  readonly line: number;
}

/** What a tool returned. */
export interface ToolResultEvent {
  readonly type: "tool_result";
  readonly server: string;
  readonly tool: string;
  /** Any JSON value (usually a string). */
  readonly content: unknown;
  /** Overrides the provenance the server's trust would give. */
  readonly provenance?: ProvenanceLabel;
  readonly line: number;
}

/** One event of a trace. */
export type TraceEvent = UserInputEvent | ToolCallEvent | ToolResultEvent;

/** A parsed trace: its name (as the person gave it) and its events in order. */
export interface Trace {
  readonly name: string;
  readonly events: readonly TraceEvent[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Shortens user input for a one-line message. */
function quote(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const oneLine = (text ?? String(value)).replace(/[\r\n\t]/g, " ");
  return oneLine.length > 40 ? `${oneLine.slice(0, 40)}…` : oneLine;
}

function invalid(line: number, path: (string | number)[], message: string, help?: string): Issue {
  const issue: Issue = { code: "invalid_event", path, message, line };
  return help === undefined ? issue : { ...issue, help };
}

function requireString(event: Record<string, unknown>, key: string, line: number, issues: Issue[]): string {
  const value = event[key];
  if (typeof value === "string" && value.length > 0) return value;
  const type = String(event["type"]);
  issues.push(
    value === undefined
      ? invalid(line, [key], `\`${type}\` event without \`${key}\``)
      : invalid(line, [key], `\`${type}\` event: \`${key}\` must be a non-empty string`),
  );
  return "";
}

function parseToolCall(event: Record<string, unknown>, line: number, issues: Issue[]): ToolCallEvent {
  const server = requireString(event, "server", line, issues);
  const tool = requireString(event, "tool", line, issues);
  const rawArgs = event["args"];
  let args: Record<string, unknown> = {};
  if (rawArgs !== undefined) {
    if (isPlainObject(rawArgs)) args = rawArgs;
    else issues.push(invalid(line, ["args"], "`tool_call` event: `args` must be an object"));
  }
  return { type: "tool_call", server, tool, args, line };
}

function parseToolResult(event: Record<string, unknown>, line: number, issues: Issue[]): ToolResultEvent {
  const server = requireString(event, "server", line, issues);
  const tool = requireString(event, "tool", line, issues);
  if (!("content" in event)) issues.push(invalid(line, ["content"], "`tool_result` event without `content`"));
  const provenance = event["provenance"];
  const result: ToolResultEvent = { type: "tool_result", server, tool, content: event["content"], line };
  if (provenance === undefined) return result;
  if (typeof provenance === "string" && (PROVENANCE_LABELS as readonly string[]).includes(provenance)) {
    return { ...result, provenance: provenance as ProvenanceLabel };
  }
  issues.push(
    invalid(
      line,
      ["provenance"],
      `unknown provenance \`${quote(provenance)}\``,
      `expected ${PROVENANCE_LABELS.join(", ")}`,
    ),
  );
  return result;
}

/**
 * Checks one decoded event (a JSON value) and returns it typed. Unknown fields are ignored; an unknown
 * `type` is an `unknown_event_type` issue. `line` is reported in issues (0 when not from a file).
 */
export function parseTraceEvent(value: unknown, line = 0): Result<TraceEvent> {
  if (!isPlainObject(value)) {
    return { ok: false, issues: [invalid(line, [], "an event must be a JSON object")] };
  }
  const type = value["type"];
  const issues: Issue[] = [];
  let event: TraceEvent;
  if (type === "user_input") {
    const text = value["text"];
    if (typeof text !== "string") issues.push(invalid(line, ["text"], "`user_input` event: `text` must be a string"));
    event = { type: "user_input", text: typeof text === "string" ? text : "", line };
  } else if (type === "tool_call") {
    event = parseToolCall(value, line, issues);
  } else if (type === "tool_result") {
    event = parseToolResult(value, line, issues);
  } else {
    const issue: Issue = {
      code: "unknown_event_type",
      path: ["type"],
      message: type === undefined ? "event without `type`" : `unknown event type \`${quote(type)}\``,
      line,
      help: `expected ${TRACE_EVENT_TYPES.join(", ")}`,
    };
    return { ok: false, issues: [issue] };
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: event };
}

function parseLine(text: string, line: number): Result<TraceEvent> {
  if (text.length > TRACE_LIMITS.maxLineChars) {
    const message = `line is longer than ${TRACE_LIMITS.maxLineChars} characters`;
    return { ok: false, issues: [{ code: "trace_line_too_long", path: [], message, line }] };
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { ok: false, issues: [{ code: "malformed_json", path: [], message: `malformed JSON: ${reason}`, line }] };
  }
  return parseTraceEvent(value, line);
}

/** Most issues reported for one trace; the rest are summarised in one more issue. */
const MAX_ISSUES = 20;

/**
 * Parses a trace's text (JSON lines). Blank lines are skipped; a leading BOM is ignored. Every problem
 * is reported with its 1-based line, up to 20 per trace. Never throws.
 */
export function parseTraceText(text: string, name: string): Result<Trace> {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = body.split("\n");
  const events: TraceEvent[] = [];
  const issues: Issue[] = [];
  let skipped = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    const lineText = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (lineText.trim() === "") continue;
    if (events.length >= TRACE_LIMITS.maxEvents) {
      const message = `the trace holds more than ${TRACE_LIMITS.maxEvents} events`;
      issues.push({ code: "too_many_events", path: [], message, line: i + 1 });
      break;
    }
    const parsed = parseLine(lineText, i + 1);
    if (parsed.ok) events.push(parsed.value);
    else if (issues.length < MAX_ISSUES) issues.push(...parsed.issues);
    else skipped += parsed.issues.length;
  }
  if (skipped > 0) {
    issues.push({ code: "invalid_event", path: [], message: `${skipped} more problems not shown` });
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: { name, events } };
}
