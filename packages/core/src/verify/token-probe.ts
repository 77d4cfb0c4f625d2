/**
 * The token gate of the session runtime, probed: after a trace's earlier calls executed, issue an authority
 * token for its last call and spend it twice. The second use must be refused (`token_reused`).
 */
import { createHash } from "node:crypto";
import { createSession, type Session } from "../session/index.js";
import type { TokenProbeResult, VerifyTraceEvent } from "./types.js";

/** What the probe's sessions are built from: the same intent and settings the replayed sessions get. */
export interface TokenProbeConfig {
  readonly intent: unknown;
  readonly settings: unknown;
  readonly now: Date;
}

const PROBE_KEY = new Uint8Array(createHash("sha256").update("acp policy verify").digest());

function counterRandom(): (size: number) => Uint8Array {
  let counter = 0;
  return (size) => {
    const out = new Uint8Array(size);
    for (let at = 0; at < size; at += 32) {
      const block = createHash("sha256").update(`verify\u0000${counter++}`).digest();
      out.set(block.subarray(0, Math.min(32, size - at)), at);
    }
    return out;
  };
}

function replayPrefix(session: Session, events: readonly VerifyTraceEvent[], executed: readonly boolean[]): void {
  let call = -1;
  for (const event of events) {
    if (event.type === "user_input") session.recordUserInput(event.text);
    else if (event.type === "tool_call") {
      call += 1;
      if (executed[call] === true)
        session.recordExecution({ server: event.server, tool: event.tool, arguments: event.args });
    } else if (executed[call] === true) session.recordToolResult(event.server, event.tool, event.content, {});
  }
}

/**
 * Builds the probe. `events` ends with the call to probe; `executed` says which of its calls executed (the
 * last one is the probed call). Never throws: a failure is reported as a first use that did not pass.
 */
export function createTokenProbe(
  config: TokenProbeConfig,
): (events: readonly VerifyTraceEvent[], executed: readonly boolean[]) => TokenProbeResult {
  return (events, executed) => {
    const last = events[events.length - 1];
    if (last === undefined || last.type !== "tool_call") {
      return { firstUse: false, secondUse: false, detail: "the trace does not end with a call" };
    }
    try {
      const now = config.now;
      const session = createSession({
        now: () => now,
        random: counterRandom(),
        authorityKey: PROBE_KEY,
        settings: config.settings,
      });
      session.setIntent(config.intent);
      session.start();
      replayPrefix(session, events.slice(0, -1), executed);
      const request = { server: last.server, tool: last.tool, arguments: last.args };
      const token = session.issueToken(request);
      const first = session.authorize(token, request);
      const second = session.authorize(token, request);
      const detail = second.ok ? "the second use was authorized" : `the second use was refused (${second.code})`;
      return { firstUse: first.ok, secondUse: second.ok, detail };
    } catch (err) {
      return { firstUse: false, secondUse: false, detail: err instanceof Error ? err.message : String(err) };
    }
  };
}
