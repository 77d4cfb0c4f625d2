import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { NO_SESSION, type ReplaySessionFactory } from "./session-seam.js";

/** Where the session of each replayed trace comes from. */
export interface ReplaySessionOptions {
  /** The intent file (`--intent`), as typed. */
  readonly intent?: string | undefined;
}

/**
 * The session runtime a replay plugs into its pipeline. Until the session runtime of `@acp/core`
 * lands, a replay judges with the policy (and graph) alone and `--intent` is refused.
 */
export function loadReplaySessions(_ctx: CliContext, options: ReplaySessionOptions): Promise<ReplaySessionFactory> {
  if (options.intent !== undefined) {
    throw new CliError("--intent: this build has no session runtime to run an intent in", EXIT.error);
  }
  return Promise.resolve(NO_SESSION);
}
