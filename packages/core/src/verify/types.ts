/**
 * The finite model `acp policy verify` checks: the actions an intent and a policy name, the argument values
 * of each provenance class, and bounded sessions over them, judged by the real pipeline and session runtime.
 */
import type { Reason } from "../pipeline/index.js";
import type { Category } from "../request/index.js";
import type { Route } from "../route/index.js";

/** Where an argument value comes from, as the model knows it (the session must find it out). */
export const ARG_CLASSES = ["none", "user_input", "intent_trusted", "external_untrusted"] as const;

/** One provenance class of argument values (`none`: a call without arguments). */
export type ArgClass = (typeof ARG_CLASSES)[number];

/** One action of the model: a server and a tool, with what the model knows about it. */
export interface ModelAction {
  readonly server: string;
  readonly tool: string;
  /** `server.tool`. */
  readonly name: string;
  /** Every category the built-in table, the policy's `classify:` and the session's `classify:` give it. */
  readonly categories: readonly Category[];
  /** Whether any of its categories changes something outside the agent. */
  readonly consequential: boolean;
  /** Whether any of its categories sends something out (communication, public, financial). */
  readonly send: boolean;
  /** Whether the intent allows it (allowed and not forbidden). */
  readonly inIntent: boolean;
  /** Whether its results are external_untrusted (its server is not configured as trusted). */
  readonly untrustedResult: boolean;
  /** Whether it reads untrusted content: a read whose results are untrusted (they may hold an attacker's text). */
  readonly untrustedRead: boolean;
  /** Whether the model made it up as the one action nothing names (`other.other_tool`). */
  readonly other: boolean;
}

/** One argument value of one provenance class. */
export interface ModelValue {
  readonly cls: ArgClass;
  /** The value put in every argument key; null for `none`. */
  readonly value: string | null;
}

/** The finite model. */
export interface VerifyModel {
  readonly actions: readonly ModelAction[];
  /** The values the agent may pass; `external_untrusted` only after it read untrusted content. */
  readonly values: readonly ModelValue[];
  /** The argument keys every value is put in (`to`, and every top-level key the policy's rules match). */
  readonly argumentKeys: readonly string[];
  /** What the user says at the start of every session (it holds the `user_input` value). */
  readonly userText: string;
  /**
   * What an untrusted result may hold, each explored: plain text naming the `external_untrusted` value, and
   * the same value inside an injected instruction.
   */
  readonly untrustedContents: readonly string[];
  /** What a trusted result holds. */
  readonly trustedContent: string;
  /** Whether a policy rule has a rate limit (then calls that do not execute still change state). */
  readonly rateLimited: boolean;
  /** Patterns the model could not sample with a concrete action name (reported, not fatal). */
  readonly unsampled: readonly string[];
}

/** A replay trace event (docs/reference/cli/replay.md), as the model writes it. */
export type VerifyTraceEvent =
  | { readonly type: "user_input"; readonly text: string }
  | {
      readonly type: "tool_call";
      readonly server: string;
      readonly tool: string;
      readonly args: Readonly<Record<string, string>>;
    }
  | { readonly type: "tool_result"; readonly server: string; readonly tool: string; readonly content: string };

/** The pipeline's route for one replayed `tool_call`. */
export interface StepDecision {
  readonly route: Route;
  readonly reasons: readonly Reason[];
}

/** What a probe of the authority-token gate found for one accepted call. */
export interface TokenProbeResult {
  /** Whether the first use of a freshly issued token was authorized. */
  readonly firstUse: boolean;
  /** Whether a second use of the same token was authorized (a violation). */
  readonly secondUse: boolean;
  /** Why the second use was refused (`token_reused`), or what went wrong. */
  readonly detail: string;
}

/**
 * Runs traces through the real decision path. `run` replays a whole trace in a fresh session (as `acp replay`
 * does) and returns the decision on every `tool_call`, in order. `probeToken` issues a token for the trace's
 * last call after the rest executed, and spends it twice.
 */
export interface VerifyExecutor {
  run(events: readonly VerifyTraceEvent[]): Promise<readonly StepDecision[]>;
  probeToken?(events: readonly VerifyTraceEvent[], executed: readonly boolean[]): TokenProbeResult;
}

/** The four invariants, in the order they are reported. */
export const INVARIANT_IDS = [
  "outside_intent_executed",
  "untrusted_to_consequential",
  "token_reused",
  "untrusted_read_then_send",
] as const;

/** One invariant's id. */
export type InvariantId = (typeof INVARIANT_IDS)[number];

/** A trace that breaks an invariant: replaying `events` shows `route` on the last `tool_call`. */
export interface Counterexample {
  readonly invariant: InvariantId;
  /** What went wrong, in words. */
  readonly message: string;
  readonly events: readonly VerifyTraceEvent[];
  /** The violating call's decision. */
  readonly route: Route;
  readonly reasons: readonly Reason[];
}

/** The bounds of one check. */
export interface VerifyBounds {
  /** Most tool calls in a session. */
  readonly depth: number;
  /** Most distinct states before the check stops unfinished. */
  readonly maxStates: number;
  /**
   * Whether a person approves every call routed ask or defer (it then executes, as `acp replay
   * --approve-asks` replays it). Default false: only accepted calls execute. Either way an invariant that
   * needs a person is broken only by an accepted call.
   */
  readonly approveAsks?: boolean;
}

/** What a check found. */
export interface VerifyReport {
  /** `verified`: every invariant holds within the bound; `violated`: a counterexample; `too_large`: stopped. */
  readonly outcome: "verified" | "violated" | "too_large";
  readonly depth: number;
  /** Whether every session within the bound was explored (false: stopped at `maxStates` or at all-broken). */
  readonly complete: boolean;
  /** Whether the exploration stopped because more than `maxStates` states were reached. */
  readonly limitReached: boolean;
  /** Distinct states reached. */
  readonly states: number;
  /** Calls judged (each runs the real pipeline once). */
  readonly calls: number;
  /** The first (shortest) counterexample of each violated invariant, in invariant order. */
  readonly violations: readonly Counterexample[];
}
