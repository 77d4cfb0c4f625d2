import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { mediaTypeEssence } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { AnswerStreamGuard, JsonAnswerWatch, type AnswerWatch } from "./answer-stream-guard.js";

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
 */
export function createAbortIsolatingFetch(
  given: FetchLike = fetch,
  carriers?: RequestCarriers,
  options: { readonly sse?: boolean } = {},
): FetchLike {
  const base = sameOriginRedirects(given);
  return async (url, init) => {
    const parent = init?.signal;
    if (parent === undefined || parent === null || parent.aborted) return bounded(await base(url, init));
    const own = new AbortController();
    const onAbort = (): void => own.abort(parent.reason);
    parent.addEventListener("abort", onAbort, { once: true });
    const carried = carriers?.idOf(init?.body);
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
    if (response.body === null || !response.ok) {
      release();
      return bounded(response);
    }
    const method = (init?.method ?? "GET").toUpperCase();
    const watched =
      carried !== undefined
        ? watchOf(response, carried, carriers)
        : options.sse === true && method === "GET"
          ? connectionWatch(response, carriers)
          : undefined;
    // a connection closing fails its calls itself (the SDK's "Connection closed")
    const watch = watched && { ...watched, fail: (why: string) => void (parent.aborted || watched.fail(why)) };
    const body = releasingBody(response.body, release, sizeLimit(response), watch);
    // ... and its event stream ends, as if the server had ended it (the SDK then neither fails nor resumes it)
    if (carried !== undefined) carriers?.carry(carried, body.end);
    return new Response(body.stream, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * The HTTP requests carrying the relay's JSON-RPC requests, by their id: once the relay no longer waits for
 * an answer (it came, the call timed out or was cancelled), `end(id)` ends the request's answer. Without
 * it an upstream that keeps the answer's event stream open (sending nothing, or notifications for ever)
 * after the call gave up on it would keep a connection, and the proxy reading it, for as long as it likes.
 */
export class RequestCarriers {
  readonly #byId = new Map<string, () => void>();
  #hooks: CarrierHooks | undefined;
  constructor(readonly idPattern: RegExp) {}

  /** Where the failures of carried requests (`fail`) and the answers dropped from them (`say`) go. */
  listen(hooks: CarrierHooks): void {
    this.#hooks = hooks;
  }

  /** Fails the request `id` at once: its answer can no longer come (`why` says what came instead). */
  fail(id: string, why: string): void {
    this.#hooks?.fail(id, why);
  }

  /** Fails every request in flight at once: the stream carrying their answers is gone (`why`). */
  failAll(why: string): void {
    this.#hooks?.failAll(why);
  }

  /** Says what was dropped from an answer. */
  say(what: string): void {
    this.#hooks?.say(what);
  }

  /** The id of the JSON-RPC request in a body (`{"jsonrpc":"2.0","id":"…",…`) that `idPattern` takes. */
  idOf(body: unknown): string | undefined {
    if (typeof body !== "string") return undefined;
    const id = /^\{"jsonrpc":"2\.0","id":"([^"\\]{1,64})"/.exec(body.slice(0, 128))?.[1];
    return id !== undefined && this.idPattern.test(id) ? id : undefined;
  }

  carry(id: string, end: () => void): void {
    this.#byId.set(id, end);
  }

  forget(id: string): void {
    this.#byId.delete(id);
  }

  /** Ends the answer of the request carrying `id`, if one is open. */
  end(id: string): void {
    const end = this.#byId.get(id);
    this.#byId.delete(id);
    end?.();
  }

  /** HTTP requests with an answer open (tests). */
  get size(): number {
    return this.#byId.size;
  }
}

/** What {@link RequestCarriers} tells of the requests it carries. */
export interface CarrierHooks {
  readonly fail: (id: string, why: string) => void;
  readonly failAll: (why: string) => void;
  readonly say: (what: string) => void;
}

/** The watch over the answer to carried request `id`: an event stream's or a JSON answer's, by its type. */
function watchOf(response: Response, id: string, carriers: RequestCarriers | undefined): Watched | undefined {
  if (carriers === undefined) return undefined;
  const type = mediaType(response);
  const say = (what: string): void => carriers.say(what);
  const watch =
    type === "text/event-stream"
      ? new AnswerStreamGuard(id, say)
      : type === "application/json"
        ? new JsonAnswerWatch(id, say)
        : undefined;
  return watch === undefined ? undefined : { watch, fail: (why) => carriers.fail(id, why) };
}

/**
 * The watch over the event stream of an HTTP+SSE connection (`sse`): it carries every answer, so when it
 * ends or fails every call in flight fails at once (`carriers.failAll`); a batch in it is taken apart.
 */
function connectionWatch(response: Response, carriers: RequestCarriers | undefined): Watched | undefined {
  if (carriers === undefined || !isEventStream(response)) return undefined;
  const watch = new AnswerStreamGuard(undefined, (what) => carriers.say(what));
  return { watch, fail: (why) => carriers.failAll(why) };
}

interface Watched {
  readonly watch: AnswerWatch;
  readonly fail: (why: string) => void;
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
      if (!repeats) throw new Error(`it answered a ${method} with a redirect (${response.status}) to ${next.href}`);
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
