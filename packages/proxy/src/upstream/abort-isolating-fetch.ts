import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

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
 */
export function createAbortIsolatingFetch(given: FetchLike = fetch): FetchLike {
  const base = sameOriginRedirects(given);
  return async (url, init) => {
    const parent = init?.signal;
    if (parent === undefined || parent === null || parent.aborted) return bounded(await base(url, init));
    const own = new AbortController();
    const onAbort = (): void => own.abort(parent.reason);
    parent.addEventListener("abort", onAbort, { once: true });
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      parent.removeEventListener("abort", onAbort);
    };
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
    return new Response(releasingBody(response.body, release, sizeLimit(response)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
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
  const limited = new Response(
    releasingBody(response.body, () => undefined, sizeLimit(response)),
    {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    },
  );
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
  const events = (response.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream");
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
 * (and cancelling the body) once `tooLarge` says the bytes so far are past the size of one message.
 */
function releasingBody(
  body: ReadableStream<Uint8Array>,
  release: () => void,
  tooLarge: (chunk: Uint8Array) => boolean,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else if (tooLarge(value)) {
          release();
          controller.error(new Error(`the server's answer is over the ${MAX_MESSAGE_BYTES}-byte limit of one message`));
          await reader.cancel().catch(() => undefined);
        } else controller.enqueue(value);
      } catch (err) {
        release();
        controller.error(err);
      }
    },
    async cancel(reason) {
      release();
      await reader.cancel(reason);
    },
  });
}
