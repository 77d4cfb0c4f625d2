import type { Result, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "./tool-call-handler.js";

/**
 * One downstream `tools/call` in flight to an upstream. What that upstream sends while the call runs
 * (logging, sampling, elicitation) goes back on this call's own response stream, as a direct connection
 * would carry it: a client that never opens the standalone SSE stream still receives it.
 */
export interface InflightCall {
  /** The upstream server the call went to. */
  readonly server: string;
  /** Sends a notification on the call's response stream. */
  notify(notification: ServerNotification): void;
  /** Sends a request to the client on the call's response stream and returns its answer. */
  request(request: ServerRequest, options: { signal: AbortSignal; timeout: number }): Promise<Result>;
  /** Resolves once every notification sent so far has reached the transport (await before replying). */
  settled(): Promise<void>;
}

/** A session as routing sees it: its id and its calls in flight, oldest first. */
export interface RoutableSession {
  readonly id: string;
  readonly calls: ReadonlySet<InflightCall>;
}

/**
 * Where a message an upstream sends on its own (not a reply) goes. The upstream connection is shared by
 * every downstream session and MCP does not say which call a server-to-client message belongs to, so:
 * - `call`: exactly one session has calls in flight to that server: its newest call;
 * - `ambiguous`: more than one session has: nobody (a sampling or elicitation request, or a log line,
 *   must never reach another agent's client);
 * - `only`: no call in flight and exactly one session connected: that session;
 * - `idle`: no call in flight and several sessions (or none) connected.
 */
export type UpstreamMessageRoute<S extends RoutableSession> =
  | { readonly kind: "call"; readonly session: S; readonly call: InflightCall }
  | { readonly kind: "ambiguous"; readonly sessions: readonly S[] }
  | { readonly kind: "only"; readonly session: S }
  | { readonly kind: "idle"; readonly sessions: readonly S[] };

/** Decides where a message from upstream `server` goes (see {@link UpstreamMessageRoute}). */
export function routeUpstreamMessage<S extends RoutableSession>(
  sessions: Iterable<S>,
  server: string,
): UpstreamMessageRoute<S> {
  const all = [...sessions];
  const busy: { session: S; call: InflightCall }[] = [];
  for (const session of all) {
    let newest: InflightCall | undefined;
    for (const call of session.calls) if (call.server === server) newest = call;
    if (newest !== undefined) busy.push({ session, call: newest });
  }
  const [first] = busy;
  if (busy.length === 1 && first !== undefined) return { kind: "call", session: first.session, call: first.call };
  if (busy.length > 1) return { kind: "ambiguous", sessions: busy.map((b) => b.session) };
  const [only] = all;
  if (all.length === 1 && only !== undefined) return { kind: "only", session: only };
  return { kind: "idle", sessions: all };
}

/**
 * Creates the in-flight record of one call whose handler received `extra` (its `sendNotification` and
 * `sendRequest` answer on the call's own stream).
 */
export function createInflightCall(server: string, extra: CallContext): InflightCall {
  let last: Promise<void> = Promise.resolve();
  return {
    server,
    notify(notification) {
      const sent = extra.sendNotification(notification).catch(() => undefined);
      last = Promise.all([last, sent]).then(() => undefined);
    },
    // the answer is passed on unchanged (every field kept): the upstream validates it
    request: (request, options) => extra.sendRequest(request, options),
    settled: () => last,
  };
}
