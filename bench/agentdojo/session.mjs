// The session runtime the benchmark runs under (filled in when @acp/core has one).
import { NO_SESSION } from "@acp/cli";

/** Whether this build has a session runtime. */
export const SESSION_RUNTIME = false;

/** A fresh session per trace. */
export function benchSessions() {
  return NO_SESSION;
}
