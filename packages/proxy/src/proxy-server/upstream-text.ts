import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { MAX_ENTRY_CHARS } from "@acp/core";
import type { AcpProxy } from "./acp-proxy.js";
import { ContentReader, logText, requestText } from "./readable-content.js";
import type { ProgressRelay } from "./progress-relay.js";
import { withoutSmuggledString } from "./smuggled-text.js";
import { unreadable } from "./tool-call-handler.js";

/**
 * What an upstream says to the agent besides a tool result is untrusted text like one: a resource, a prompt,
 * the error of any request relayed in its own words, a completion's values, a log line, a progress message,
 * and the requests it sends the agent's client (sampling, elicitation). The session runtime is told what the
 * agent can read of it (`ContentReader`: text, and blobs of a text-like type) as the result of
 * `<server>.<method>`, after the reply or before this session's next decision, so a value first seen there is
 * traced as a tool result's would be.
 * A resource read was decided, and counted as executed when the gate let it through: its text names that call
 * (`call`, its `seq`); the rest was not decided, so only its text is told. What could not be told whole (a blob past the decoding limit, an observer that throws) is reported
 * unreadable.
 */
export function observeRead(
  proxy: AcpProxy,
  sessionId: string,
  server: string,
  method: string,
  call: number | undefined,
  read: (reader: ContentReader) => string,
  options: ReadOptions = {},
): void {
  const observer = proxy.options.observer;
  if (observer === undefined) return;
  proxy.observations.add(sessionId, () => {
    if (!proxy.sessions.has(sessionId)) return;
    try {
      const reader = new ContentReader();
      const text = read(reader);
      const hidden = options.hiddenTextRemoved;
      const told = {
        ...(options.error === true ? { error: true } : {}),
        ...((typeof hidden === "function" ? hidden() : hidden === true) ? { hiddenTextRemoved: true } : {}),
        ...(call !== undefined ? { call } : {}),
      };
      if (Object.keys(told).length > 0) observer.result(sessionId, server, method, text, told);
      else observer.result(sessionId, server, method, text);
      if (reader.cut !== undefined) unreadable(proxy, sessionId, server, method, reader.cut);
    } catch (err) {
      unreadable(proxy, sessionId, server, method, err instanceof Error ? err.message : String(err));
    }
  });
}

/** How {@link observeRead} tells what was read. */
export interface ReadOptions {
  /** What `read` tells is the request's error: untrusted even from a trusted server. */
  readonly error?: boolean;
  /**
   * Tag characters or bidi controls were taken out of it before the agent read it (`acp/hidden_text_removed`):
   * the runtime counts it as instruction-like content. A function when that is known only as it is told (notes
   * gathered until then).
   */
  readonly hiddenTextRemoved?: boolean | (() => boolean);
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
  /** Tag characters or bidi controls were taken out of it before the client got it. */
  hiddenTextRemoved = false,
): void {
  observeRead(proxy, sessionId, server, method, undefined, (reader) => requestText(reader, method, params), {
    hiddenTextRemoved,
  });
}

/** Notes (log lines, progress messages) of one upstream to one session not yet told: told together, as one result. */
interface PendingNotes {
  readonly lines: string[];
  chars: number;
  /** Why some were not kept (more than one result holds). */
  cut?: string;
  /** One of them had tag characters or bidi controls taken out. */
  hidden: boolean;
}

const pendingNotes = new WeakMap<AcpProxy, Map<string, PendingNotes>>();

/**
 * A log line (`notifications/message`) an upstream sent to the session `sessionId`: told as
 * {@link observeNote} tells it. Its logger and data are what the agent's client shows.
 */
export function observeLog(
  proxy: AcpProxy,
  sessionId: string,
  server: string,
  params: unknown,
  /** Tag characters or bidi controls were taken out of it before the client got it. */
  hiddenTextRemoved = false,
): void {
  if (proxy.options.observer === undefined) return;
  let text: string;
  try {
    text = logText(params);
  } catch (err) {
    unreadable(proxy, sessionId, server, "notifications/message", err instanceof Error ? err.message : String(err));
    return;
  }
  observeNote(proxy, sessionId, server, "notifications/message", text, hiddenTextRemoved);
}

/**
 * A progress reporter that also tells the session runtime each message of the upstream's progress (the
 * agent's client shows it), as {@link observeNote} tells it; the proxy's own waiting messages are not told.
 * Tag characters and bidi controls are taken out of the message before the client or the runtime reads it.
 */
export function toldProgress(proxy: AcpProxy, sessionId: string, server: string, relay: ProgressRelay): ProgressRelay {
  return {
    ...relay,
    upstream(progress) {
      const said = progress.message;
      const message = typeof said === "string" ? withoutSmuggledString(said) : said;
      relay.upstream(message === said ? progress : { ...progress, message });
      if (typeof message !== "string") return;
      const hidden = message !== said;
      if (hidden)
        proxy.logHiddenText(server, `upstream \`${server}\`: hidden characters removed from a progress message`);
      observeNote(proxy, sessionId, server, "notifications/progress", message, hidden);
    },
  };
}

/**
 * A short text an upstream sent the session `sessionId` on its own (`method`: a log line, a progress
 * message). Those that come before the session is told are told together as one result
 * (`<server>.<method>`), so a chatty server does not fill the session with one entry a line; past
 * `MAX_ENTRY_CHARS` characters waiting, further ones are not kept and the result is reported unreadable.
 */
export function observeNote(
  proxy: AcpProxy,
  sessionId: string,
  server: string,
  method: string,
  text: string,
  /** Tag characters or bidi controls were taken out of `text`: the result is told as having had hidden text. */
  hiddenTextRemoved = false,
): void {
  if (proxy.options.observer === undefined || (text === "" && !hiddenTextRemoved)) return;
  let pending = pendingNotes.get(proxy);
  if (pending === undefined) {
    pending = new Map();
    pendingNotes.set(proxy, pending);
  }
  const key = `${sessionId}\u0000${server}\u0000${method}`;
  const waiting = pending.get(key);
  if (waiting !== undefined) {
    if (hiddenTextRemoved) waiting.hidden = true;
    if (waiting.chars + text.length > MAX_ENTRY_CHARS) {
      waiting.cut = `more than ${MAX_ENTRY_CHARS} characters of \`${method}\` came before the session was told`;
    } else {
      waiting.lines.push(text);
      waiting.chars += text.length + 1;
    }
    return;
  }
  const notes: PendingNotes = { lines: [text], chars: text.length, hidden: hiddenTextRemoved };
  const all = pending;
  all.set(key, notes);
  const read = (reader: ContentReader): string => {
    all.delete(key);
    if (notes.cut !== undefined) reader.cut = notes.cut;
    return notes.lines.join("\n");
  };
  // whether any of them had hidden text is known once they are told (more may come until then)
  observeRead(proxy, sessionId, server, method, undefined, read, { hiddenTextRemoved: () => notes.hidden });
  // a session gone before it was told: its notes are dropped with it
  proxy.observations.add(sessionId, () => void all.delete(key));
}
