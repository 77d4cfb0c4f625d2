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
 */
export function createAbortIsolatingFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const parent = init?.signal;
    if (parent === undefined || parent === null || parent.aborted) return base(url, init);
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
      return response;
    }
    return new Response(releasingBody(response.body, release), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** `body`'s bytes, calling `release` once they are all read, the stream is cancelled or it fails. */
function releasingBody(body: ReadableStream<Uint8Array>, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
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
