import { compilePolicy, type ActionRequest, type CompiledPolicy, type Reason, type Route } from "@acp/core";
import { buildPipelineWith, type DecisionInputs } from "../decision/load.js";
import { NO_SESSION, type ReplaySession, type ReplaySessionFactory } from "./session-seam.js";
import type { ToolResultEvent, Trace } from "./trace.js";

/** The decision on one replayed `tool_call`: the line `acp replay` prints for it. */
export interface ReplayedCall {
  /** The trace's name (the path as given). */
  readonly trace: string;
  /** 0-based position of the `tool_call` among the trace's events (blank lines not counted). */
  readonly index: number;
  readonly server: string;
  readonly tool: string;
  readonly route: Route;
  readonly reasons: readonly Reason[];
}

/** How to replay: the loaded policy (and graph), the session runtime, which servers are trusted. */
export interface ReplayConfig {
  readonly inputs: DecisionInputs;
  /** Builds one fresh session per trace; `NO_SESSION` when absent. */
  readonly sessions?: ReplaySessionFactory;
  /**
   * Servers whose answers are trusted (`system_policy`), but not their errors (content `isError: true`) nor
   * what they say besides their answers (a `tool` with a `/` other than `resources/read` and `prompts/get`:
   * log lines, progress, sampling requests); every other result is `external_untrusted`.
   */
  readonly trustedServers?: ReadonlySet<string>;
  /** The one instant every decision is made at (replays are deterministic). */
  readonly now: Date;
  /**
   * Whether a call routed `ask` or `defer` counts as approved by a person and executes (its result is
   * then recorded). Default false: only accepted calls execute.
   */
  readonly approveAsks?: boolean;
}

/** Replays traces, each as its own fresh session; the policy is compiled once. */
export interface Replayer {
  replayTrace(trace: Trace): Promise<readonly ReplayedCall[]>;
}

interface PendingCall {
  readonly key: string;
  readonly executed: boolean;
}

function callKey(server: string, tool: string): string {
  return `${server}\u0000${tool}`;
}

/**
 * Matches a result to the oldest earlier call of the same server and tool still without a result.
 * Returns whether the result counts: the call executed, or there was no such call (content the agent
 * saw without calling for it).
 */
function resultCounts(pending: PendingCall[], event: ToolResultEvent): boolean {
  const key = callKey(event.server, event.tool);
  const at = pending.findIndex((p) => p.key === key);
  if (at < 0) return true;
  const [call] = pending.splice(at, 1);
  return call?.executed === true;
}

/**
 * Whether a result's content is the call's error as MCP writes one (`{ isError: true, ... }`), read as
 * `@acp/core`'s session reads it: a content that cannot be read so counts as one.
 */
function isErrorContent(content: unknown): boolean {
  if (typeof content !== "object" || content === null || Array.isArray(content)) return false;
  try {
    return (content as { readonly isError?: unknown }).isError === true;
  } catch {
    return true;
  }
}

/**
 * Whether a result recorded under `tool` is a server's answer (a tool's result, `resources/read`,
 * `prompts/get`), as `@acp/core`'s session reads it; not what the server says besides its answers, recorded
 * under a protocol method's name (`notifications/message`, `notifications/progress`, `sampling/createMessage`,
 * `completion/complete`, …).
 */
function isAnswer(tool: string): boolean {
  return !tool.includes("/") || tool === "resources/read" || tool === "prompts/get";
}

/**
 * Records a result. The event's `provenance` decides when present; else a server in `trustedServers` is
 * trusted for its answers only, as in `acp proxy` (ADR 0008): not its errors (point 3: a content with
 * `isError: true` speaks of the call, not for the server), nor what it says besides its answers (point 2: a
 * log line, a progress message, a sampling request, a completion, recorded under a method's name with a
 * `/`, may echo what it was asked), which are untrusted text whatever the server's trust; else the session's
 * own configuration decides (untrusted unless configured). An error is always told to the session as one
 * (`error: true`).
 */
function recordResult(session: ReplaySession, event: ToolResultEvent, trusted: ReadonlySet<string>): void {
  const error = isErrorContent(event.content);
  let isTrusted: boolean | undefined;
  if (event.provenance !== undefined) isTrusted = event.provenance !== "external_untrusted";
  else if (trusted.has(event.server)) isTrusted = !error && isAnswer(event.tool);
  session.recordToolResult(event.server, event.tool, event.content, {
    ...(isTrusted === undefined ? {} : { trusted: isTrusted }),
    ...(error ? { error: true } : {}),
  });
}

/** Builds a replayer from a config. */
export function createReplayer(config: ReplayConfig): Replayer {
  const compiled: CompiledPolicy = compilePolicy(config.inputs.policy);
  const sessions = config.sessions ?? NO_SESSION;
  const trusted = config.trustedServers ?? new Set<string>();
  return {
    async replayTrace(trace: Trace): Promise<readonly ReplayedCall[]> {
      const session = sessions(trace.name);
      const pipeline = buildPipelineWith(config.inputs, { compiled, extraSources: session.sources });
      const pending: PendingCall[] = [];
      const calls: ReplayedCall[] = [];
      for (const [index, event] of trace.events.entries()) {
        if (event.type === "user_input") {
          session.recordUserInput(event.text);
        } else if (event.type === "tool_result") {
          if (resultCounts(pending, event)) recordResult(session, event, trusted);
        } else {
          const request: ActionRequest = { tool: event.tool, server: event.server, arguments: event.args };
          const decision = await pipeline.decide(request, config.now);
          const executed = decision.route === "accept" || (config.approveAsks === true && decision.route !== "refuse");
          if (executed) session.recordExecution(request, decision);
          pending.push({ key: callKey(event.server, event.tool), executed });
          const { server, tool } = event;
          calls.push({ trace: trace.name, index, server, tool, route: decision.route, reasons: decision.reasons });
        }
      }
      return calls;
    },
  };
}
