import type { ActionRequest, Decision, DecisionSource } from "@acp/core";

/**
 * The seam between the replay driver and a session runtime. A replay builds one `ReplaySession` per
 * trace (a fresh session: nothing carries over between traces), feeds it what the trace shows, and
 * adds its sources to that trace's pipeline. Without a session runtime the sources are the policy
 * (and graph) alone.
 */
export interface ReplaySession {
  /** Sources this session adds to the pipeline, judged after the policy, graph and contract. */
  readonly sources: readonly DecisionSource[];
  /** The user's words (trusted: `user_input` provenance). */
  recordUserInput(text: string): void;
  /**
   * What a tool returned. `trusted` true labels it `system_policy`, false `external_untrusted`; absent,
   * the session's own configuration decides (untrusted unless its server is configured as trusted).
   * `error`: the result is the call's error (content `isError: true`), untrusted unless `trusted` is true.
   */
  recordToolResult(
    server: string,
    tool: string,
    content: unknown,
    options: { readonly trusted?: boolean; readonly error?: boolean },
  ): void;
  /** The provenance of what the session recorded, in order (`source`, `label`); absent without a session. */
  readonly provenance?: () => readonly { readonly source: string; readonly label: string }[];
  /** A call that executed (accepted, or asked and approved where the driver is told to approve asks). */
  recordExecution(request: ActionRequest, decision: Decision): void;
}

/** Builds a fresh session for the trace named `traceName`. */
export type ReplaySessionFactory = (traceName: string) => ReplaySession;

/** No session runtime: the pipeline is the policy (and graph) alone, and nothing is recorded. */
export const NO_SESSION: ReplaySessionFactory = () => ({
  sources: [],
  recordUserInput: () => undefined,
  recordToolResult: () => undefined,
  recordExecution: () => undefined,
});
