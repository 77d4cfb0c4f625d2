import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { mediaTypeEssence } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { AnswerStreamGuard, JsonAnswerWatch, type AnswerWatch } from "./answer-stream-guard.js";
import { setTimeout as sleep } from "node:timers/promises";
import type { RequestCarriers } from "./request-carriers.js";
import { STREAM_OPEN_BURST, STREAM_OPENS_PER_SECOND, streamOpenBudget } from "./stream-open-budget.js";

export { RequestCarriers, type CarrierHooks } from "./request-carriers.js";

/**
 * A fetch for the SDK's HTTP client transports that gives every request an abort signal of its own.
 *
 * The transports pass one long-lived signal (the connection's) to every request. Node's fetch (undici)
 * adds an abort listener to that signal per request and removes it only when the request object is
 * garbage-collected, so a busy URL upstream piles up thousands of listeners on one signal, and Node
 * writes "Possible EventTarget memory leak detected" into the proxy's log (the client's log, for a
 * stdio proxy) every call past 1,500.
 *
 * Here the connection's signal holds one listener per request still in flight, removed as soon as the
 * response's body has been read to its end, cancelled or has failed (at once when there is no body to
 * read); aborting the connection still aborts every request and body in flight. Redirects and error
 * answers are returned as they came (the SDK reads their status, headers and URL); a successful answer
 * with a body is returned as a new `Response` with the same status, headers and body bytes.
 *
 * Every body is also held to the size of one message an upstream may send over stdio (10 MiB, see
 * {@link MAX_MESSAGE_BYTES}): a body that goes past it fails. The SDK reads a JSON answer (or an error's
 * text) whole, so without a bound one server's endless answer could fill the proxy's memory.
 *
 * The answer to a request `carriers` carries (a relayed `tools/call`) is read as it passes (see
 * {@link AnswerStreamGuard}): once it can no longer answer its call (an event that is no JSON-RPC, an end
 * or a failure without the answer, an event over the size) the call is failed at once (`carriers.fail`)
 * rather than left to wait for its timeout; answers to other ids in it are dropped.
 *
 * Event streams (GETs) are opened at most {@link STREAM_OPEN_BURST} at once, then once a second (see
 * {@link streamOpenBudget}).
 *
 * Over streamable HTTP (without `sse`: HTTP+SSE answers every POST 202 and every answer on its event stream),
 * a POST holding a request that is answered `202 Accepted` fails (the request's send fails, so its call
 * does at once, with the SDK's own requests too): no answer to it can come (see {@link acceptedRequest}).
 */
export function createAbortIsolatingFetch(
  given: FetchLike = fetch,
  carriers?: RequestCarriers,
  options: { readonly sse?: boolean } = {},
): FetchLike {
  const base = sameOriginRedirects(given);
  const opens = streamOpenBudget();
  let slowed = false;
  return async (url, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    const from = method === "GET" ? lastEventIdOf(init) : undefined;
    // the SDK resuming the answer stream of a call that is over: refused here (it then stops resuming it)
    if (from !== undefined && carriers?.isOver(from) === true) {
      return new Response(null, { status: 405, statusText: "the call this stream answered is over" });
    }
    const parent = init?.signal;
    if (method === "GET" && asksForEvents(init)) {
      // an event stream opened again and again (the server ends each at once): at most once a second
      const wait = opens();
      if (wait > 0) {
        if (!slowed) {
          slowed = true;
          carriers?.say(
            `its event streams were opened ${STREAM_OPEN_BURST} times at once (it ends each): from now on at most ${STREAM_OPENS_PER_SECOND} a second`,
          );
        }
        await sleep(wait, undefined, parent !== undefined && parent !== null ? { signal: parent } : {});
      }
    }
    const accepted = options.sse !== true && method === "POST" ? requestMethodOf(init?.body) : undefined;
    if (parent === undefined || parent === null || parent.aborted) {
      const response = await base(url, init);
      if (accepted !== undefined && response.status === 202) throw await acceptedRequest(response, accepted);
      return bounded(response);
    }
    const own = new AbortController();
    const onAbort = (): void => own.abort(parent.reason);
    parent.addEventListener("abort", onAbort, { once: true });
    const resumed = from !== undefined ? carriers?.resumedBy(from) : undefined;
    const carried = carriers?.idOf(init?.body) ?? resumed;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      parent.removeEventListener("abort", onAbort);
      if (carried !== undefined) carriers?.forget(carried);
    };
    // the request's answer is no longer waited for: a request still waiting for its headers is aborted
    if (carried !== undefined) carriers?.carry(carried, () => own.abort(new Error("the request was settled")));
    let response: Response;
    try {
      response = await base(url, { ...init, signal: own.signal });
    } catch (err) {
      release();
      throw err;
    }
    if (accepted !== undefined && response.status === 202) {
      release();
      throw await acceptedRequest(response, accepted);
    }
    if (response.body === null || !response.ok) {
      release();
      if (resumed !== undefined && !response.ok && !parent.aborted) {
        carriers?.fail(resumed, `its answer stream ended, and resuming it failed (HTTP ${response.status})`);
      }
      return bounded(response);
    }
    const watched =
      carried !== undefined
        ? watchOf(response, carried, carriers, resumed !== undefined)
        : options.sse === true && method === "GET"
          ? connectionWatch(response, carriers)
          : undefined;
    // a connection closing fails its calls itself (the SDK's "Connection closed")
    const watch = watched && { ...watched, fail: (why: string) => void (parent.aborted || watched.fail(why)) };
    const body = releasingBody(response.body, release, sizeLimit(response), watch);
    // ... and its event stream ends, as if the server had ended it (the SDK then neither fails nor resumes it)
    if (carried !== undefined) carriers?.carry(carried, body.end, () => watched?.lastEventId?.());
    return new Response(body.stream, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * The watch over the answer to carried request `id`: an event stream's or a JSON answer's, by its type (a
 * resumed stream is read as events whatever its type, as the SDK reads it). An event stream that ends
 * without the answer at an event id is noted as resumable from there (`carriers.resumable`).
 */
function watchOf(
  response: Response,
  id: string,
  carriers: RequestCarriers | undefined,
  resumed: boolean,
): Watched | undefined {
  if (carriers === undefined) return undefined;
  const type = mediaType(response);
  const say = (what: string): void => carriers.say(what);
  const fail = (why: string): void => carriers.fail(id, why);
  if (type === "application/json" && !resumed) return { watch: new JsonAnswerWatch(id, say), fail };
  if (type !== "text/event-stream" && !resumed) return undefined;
  const guard = new AnswerStreamGuard(id, say);
  const ended = (): void => {
    const last = guard.lastEventId;
    if (!guard.answered && guard.resumable && last !== undefined) carriers.resumable(last, id);
  };
  return { watch: guard, fail, ended, lastEventId: () => guard.lastEventId };
}

/**
 * The watch over the event stream of an HTTP+SSE connection (`sse`): it carries every answer, so when it
 * ends or fails, or carries an event that is no JSON-RPC and names no call in flight (it is broken: it ends
 * there, and the SDK opens it again), every call in flight fails at once (`carriers.failAll`); a batch in it
 * is taken apart.
 */
function connectionWatch(response: Response, carriers: RequestCarriers | undefined): Watched | undefined {
  if (carriers === undefined || !isEventStream(response)) return undefined;
  // an event that is no JSON-RPC but names one call's id (`"id":"acp-relay-7"`, a broken answer) fails that call
  const named = (data: string, what: string): boolean => {
    const id = carriers.namedIn(data);
    if (id === undefined) return false;
    return carriers.failIfWaiting(id, `its event stream (HTTP+SSE) carried, for this call, ${what}`);
  };
  const watch = new AnswerStreamGuard(undefined, (what) => carriers.say(what), named);
  return { watch, fail: (why) => carriers.failAll(why) };
}

interface Watched {
  readonly watch: AnswerWatch;
  readonly fail: (why: string) => void;
  /** The body ended or broke and no call was failed: the SDK may resume it. */
  readonly ended?: () => void;
  /** The id of the last event passed on, if any. */
  readonly lastEventId?: () => string | undefined;
}

/**
 * The method of the (first) JSON-RPC request a POST's body holds, or undefined when it holds none (only
 * notifications or answers, which a server accepts with `202 Accepted`).
 */
function requestMethodOf(body: unknown): string | undefined {
  if (typeof body !== "string") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) {
    if (typeof item !== "object" || item === null) continue;
    const { method, id } = item as { method?: unknown; id?: unknown };
    if (typeof method === "string" && id !== undefined && id !== null) return method;
  }
  return undefined;
}

/**
 * The failure of a request a streamable HTTP server answered `202 Accepted` (its body let go). The
 * transport's specification (2025-03-26, 2025-06-18) has a server answer a POST holding a request with an
 * event stream or a JSON body; 202 is for notifications and answers only. Nor may the answer come on the
 * standalone `GET` stream (a server sends answers there only when resuming a stream of that request, and a
 * 202 opened none). The SDK takes a 202 as sent and leaves the request to its timeout; failing its send
 * ends it at once.
 */
async function acceptedRequest(response: Response, method: string): Promise<Error> {
  await response.body?.cancel().catch(() => undefined);
  return new Error(
    `it answered a \`${method}\` request with 202 Accepted, so no answer will come (a streamable HTTP server answers a request with JSON or an event stream)`,
  );
}

/** Whether a request asks for an event stream (`Accept: text/event-stream`: the SDK opening one). */
function asksForEvents(init: RequestInit | undefined): boolean {
  const headers = init?.headers;
  return headers !== undefined && (new Headers(headers).get("accept") ?? "").includes("text/event-stream");
}

/** The `Last-Event-ID` of a request (the SDK resuming a stream), if any. */
function lastEventIdOf(init: RequestInit | undefined): string | undefined {
  const headers = init?.headers;
  if (headers === undefined) return undefined;
  const value = new Headers(headers).get("last-event-id");
  return value === null || value === "" ? undefined : value;
}

/** The media type of `response` as the SDK's transports read it (a parameter naming another type is no type). */
function mediaType(response: Response): string | undefined {
  return mediaTypeEssence(response.headers.get("content-type") ?? undefined);
}

function isEventStream(response: Response): boolean {
  return mediaType(response) === "text/event-stream";
}

/** Most redirects followed for one request (each within the upstream's own origin). */
export const MAX_REDIRECTS = 5;

/**
 * `base` following redirects only within the origin it was asked for. Node's fetch follows a redirect to any
 * host, carrying every header but `Authorization` with it: a credential the proxy injects as a header
 * (`inject: {header: X-Api-Key}`) would go wherever an upstream, or anyone between it and the proxy on
 * plain http, points it. A redirect to another origin is refused (the error says which, and what to
 * configure instead); within the origin, 307 and 308 repeat the request as it was, and 301, 302 and 303
 * are followed for GET and HEAD only (an MCP POST turned into a GET would mean nothing).
 */
function sameOriginRedirects(base: FetchLike): FetchLike {
  return async (url, init) => {
    let target = new URL(url);
    const method = (init?.method ?? "GET").toUpperCase();
    for (let hop = 0; ; hop++) {
      const response = await base(target, { ...init, redirect: "manual" });
      const location = response.headers.get("location");
      if (response.status < 300 || response.status > 399 || location === null) return response;
      await response.body?.cancel().catch(() => undefined);
      const next = new URL(location, target);
      if (next.origin !== target.origin) {
        throw new Error(
          `it redirected to another origin (${next.origin}): not followed, so what the proxy sends it (credentials included) stays with ${target.origin}; configure the URL it redirects to`,
        );
      }
      const repeats = response.status === 307 || response.status === 308 || method === "GET" || method === "HEAD";
      // named without userinfo, query or fragment: an upstream may have put there what the proxy sent it
      if (!repeats)
        throw new Error(
          `it answered a ${method} with a redirect (${response.status}) to ${next.origin}${next.pathname}`,
        );
      if (hop >= MAX_REDIRECTS) throw new Error(`it redirected more than ${MAX_REDIRECTS} times`);
      target = next;
    }
  };
}

/** The most bytes one message of an upstream may take: a JSON answer, or one event of an event stream. */
export const MAX_MESSAGE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/**
 * `response` with its body held to {@link MAX_MESSAGE_BYTES}; its status, headers, URL and `redirected`
 * kept (an error answer's URL is read by the SDK). One without a body as it is.
 */
function bounded(response: Response): Response {
  if (response.body === null) return response;
  const limited = new Response(releasingBody(response.body, () => undefined, sizeLimit(response)).stream, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(limited, "url", { value: response.url });
  Object.defineProperty(limited, "redirected", { value: response.redirected });
  return limited;
}

/**
 * Counts a body's bytes as they come and says when it is past the size of one message: the whole body,
 * or for an event stream (`text/event-stream`, open for as long as the connection) each event, from the
 * blank line that ended the last one.
 */
function sizeLimit(response: Response, max: number = MAX_MESSAGE_BYTES): (chunk: Uint8Array) => boolean {
  // read as the SDK reads the type: `application/json; x=text/event-stream` is read whole, so it is bound whole
  const events = isEventStream(response);
  let size = 0;
  let atLineStart = true;
  let afterCr = false;
  return (chunk) => {
    if (!events) {
      size += chunk.length;
      return size > max;
    }
    for (const byte of chunk) {
      if (byte === LF && afterCr) afterCr = false;
      else if (byte === LF || byte === CR) {
        if (atLineStart) size = 0; // a blank line: the event ended
        atLineStart = true;
        afterCr = byte === CR;
      } else {
        atLineStart = false;
        afterCr = false;
        size += 1;
        if (size > max) return true;
      }
    }
    return false;
  };
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * `body`'s bytes, calling `release` once they are all read, the stream is cancelled or it fails; failing
 * (and cancelling the body) once `tooLarge` says the bytes so far are past the size of one message. With
 * `watched`, the bytes pass through its watch, and the stream ends (cleanly: the SDK neither reports nor
 * resumes it) where the watch fails the call.
 */
function releasingBody(
  body: ReadableStream<Uint8Array>,
  release: () => void,
  tooLarge: (chunk: Uint8Array) => boolean,
  watched?: Watched,
): { readonly stream: ReadableStream<Uint8Array>; readonly end: () => void } {
  const reader = body.getReader();
  let ended = false;
  let control: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** Ends the stream here (with `error`, or cleanly), lets go of the server's, and fails the call with `failure`. */
  const stop = (controller: ReadableStreamDefaultController<Uint8Array>, failure?: string, error?: Error): void => {
    ended = true;
    release();
    if (error !== undefined && failure === undefined) controller.error(error);
    else controller.close();
    void reader.cancel().catch(() => undefined);
    if (failure !== undefined) watched?.fail(failure);
    else watched?.ended?.();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      control = controller;
    },
    async pull(controller) {
      // a watch may hold a chunk back (an event not ended yet): read on until something is passed on
      for (let passed = false; !passed;) {
        try {
          const { done, value } = await reader.read();
          if (ended) return;
          if (done) {
            const last = watched?.watch.end();
            if (last !== undefined && last.out.length > 0) controller.enqueue(last.out);
            ended = true;
            release();
            controller.close();
            if (last?.failure !== undefined) watched?.fail(last.failure);
            else watched?.ended?.();
            return;
          }
          if (tooLarge(value)) {
            const error = new Error(`the server's answer is over the ${MAX_MESSAGE_BYTES}-byte limit of one message`);
            return stop(controller, watched?.watch.broke(error.message, true), error);
          }
          if (watched === undefined) {
            controller.enqueue(value);
            return;
          }
          const { out, failure } = watched.watch.push(value);
          if (out.length > 0) {
            controller.enqueue(out);
            passed = true;
          }
          if (failure !== undefined) return stop(controller, failure);
        } catch (err) {
          if (ended) return;
          const error = err instanceof Error ? err : new Error(String(err));
          return stop(controller, watched?.watch.broke(error.message, false), error);
        }
      }
    },
    async cancel(reason) {
      ended = true;
      release();
      await reader.cancel(reason);
    },
  });
  /** Ends the body here, as a server ending it would (what was read is kept), and lets go of the server's. */
  const end = (): void => {
    if (ended) return;
    ended = true;
    release();
    control?.close();
    void reader.cancel().catch(() => undefined);
  };
  return { stream, end };
}
