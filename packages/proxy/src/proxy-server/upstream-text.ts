import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { MAX_ENTRY_CHARS, type ActionRequest } from "@acp/core";
import type { AcpProxy } from "./acp-proxy.js";
import { ContentReader, logText, requestText } from "./readable-content.js";
import { unreadable } from "./tool-call-handler.js";

/**
 * What an upstream says to the agent besides a tool result is untrusted text like one: a resource, a prompt,
 * the error of any request relayed in its own words, a completion's values, a log line, and the requests it
 * sends the agent's client (sampling, elicitation). The session runtime is told what the agent can read of it
 * (`ContentReader`: text, and blobs of a text-like type) as the result of `<server>.<method>`, after the reply
 * or before this session's next decision, so a value first seen there is traced as a tool result's would be.
 * A resource read was decided, so it is told as executed (`request`); the rest was not, so only its text is
 * told. What could not be told whole (a blob past the decoding limit, an observer that throws) is reported
 * unreadable.
 */
export function observeRead(
  proxy: AcpProxy,
  sessionId: string,
  server: string,
  method: string,
  request: ActionRequest | undefined,
  read: (reader: ContentReader) => string,
): void {
  const observer = proxy.options.observer;
  if (observer === undefined) return;
  proxy.observations.add(sessionId, () => {
    if (!proxy.sessions.has(sessionId)) return;
    try {
      if (request !== undefined) observer.executed(sessionId, request);
      const reader = new ContentReader();
      observer.result(sessionId, server, method, read(reader));
      if (reader.cut !== undefined) unreadable(proxy, sessionId, server, method, reader.cut);
    } catch (err) {
      unreadable(proxy, sessionId, server, method, err instanceof Error ? err.message : String(err));
    }
  });
}

/** What the agent reads of an error (an upstream's JSON-RPC error, relayed): its message, and its `data`. */
export function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const data = err instanceof McpError ? err.data : undefined;
  return data === undefined ? err.message : `${err.message}\n${JSON.stringify(data)}`;
}

/** A request an upstream sends the agent's client (sampling, elicitation): its text, told to the session. */
export function observeUpstreamRequest(
  proxy: AcpProxy,
  sessionId: string,
  server: string,
  method: string,
  params: unknown,
): void {
  observeRead(proxy, sessionId, server, method, undefined, (reader) => requestText(reader, method, params));
}

/** Log lines of one upstream to one session not yet told: told together, as one result. */
interface PendingLog {
  readonly lines: string[];
  chars: number;
  /** Why some were not kept (more than one result holds). */
  cut?: string;
}

const pendingLogs = new WeakMap<AcpProxy, Map<string, PendingLog>>();

/**
 * A log line (`notifications/message`) an upstream sent to the session `sessionId`. Lines that come before
 * the session is told are told together as one result (`<server>.notifications/message`), so a chatty server
 * does not fill the session with one entry a line; past `MAX_ENTRY_CHARS` characters waiting, further lines
 * are not kept and the result is reported unreadable.
 */
export function observeLog(proxy: AcpProxy, sessionId: string, server: string, params: unknown): void {
  if (proxy.options.observer === undefined) return;
  let text: string;
  try {
    text = logText(params);
  } catch (err) {
    unreadable(proxy, sessionId, server, "notifications/message", err instanceof Error ? err.message : String(err));
    return;
  }
  if (text === "") return;
  let pending = pendingLogs.get(proxy);
  if (pending === undefined) {
    pending = new Map();
    pendingLogs.set(proxy, pending);
  }
  const key = `${sessionId}\u0000${server}`;
  const waiting = pending.get(key);
  if (waiting !== undefined) {
    if (waiting.chars + text.length > MAX_ENTRY_CHARS) {
      waiting.cut = `log lines of more than ${MAX_ENTRY_CHARS} characters came before the session was told`;
    } else {
      waiting.lines.push(text);
      waiting.chars += text.length + 1;
    }
    return;
  }
  const log: PendingLog = { lines: [text], chars: text.length };
  const logs = pending;
  logs.set(key, log);
  observeRead(proxy, sessionId, server, "notifications/message", undefined, (reader) => {
    logs.delete(key);
    if (log.cut !== undefined) reader.cut = log.cut;
    return log.lines.join("\n");
  });
  // a session gone before it was told: its lines are dropped with it
  proxy.observations.add(sessionId, () => void logs.delete(key));
}
