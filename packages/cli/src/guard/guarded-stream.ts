import { createRedactor, NO_PATTERNS } from "@acp/core";
import { withoutSecretValues } from "@acp/proxy/gate";
import { checkResultSecrets } from "./result-secrets.js";
import { createTextStreamRedactor } from "./stream-text.js";
import {
  admitCall,
  failedRun,
  observe,
  recordCompleted,
  secretsOf,
  withheld,
  type GuardedCall,
  type GuardedCallDeps,
} from "./guarded-call.js";

/** What a streaming tool returns: an async iterable (an async generator), or a promise of one. */
export type StreamSource<C> = AsyncIterable<C> | Promise<AsyncIterable<C>>;

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function"
  );
}

/** A read given up: the caller cancelled, or the guard closed. */
class Cancelled extends Error {
  constructor(readonly reason: unknown) {
    super("cancelled");
  }
}

/**
 * The next chunk of `source`, or a {@link Cancelled} as soon as `stop` aborts (a function that does not
 * heed the signal it was given keeps nobody waiting; what it answers later is dropped).
 */
function pull<C>(source: AsyncIterator<C>, stop: AbortSignal): Promise<IteratorResult<C>> {
  if (stop.aborted) return Promise.reject(new Cancelled(stop.reason));
  const next = source.next();
  let onAbort = (): void => undefined;
  const cancelled = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Cancelled(stop.reason));
    stop.addEventListener("abort", onAbort, { once: true });
  });
  next.catch(() => undefined); // a late failure after a cancel is nobody's to handle
  return Promise.race([next, cancelled]).finally(() => stop.removeEventListener("abort", onAbort));
}

/**
 * One call of a streaming tool, as an async generator the caller reads: nothing happens until the first
 * read, which passes the call through the gate as {@link admitCall} does (a refusal rejects that read with
 * a `GuardRefusal`), then calls the function and hands on what it yields, each chunk checked before the
 * caller sees it:
 *
 * - a string is a piece of one text: every vault value in it is replaced, and so is one split across
 *   pieces (the end of a piece that could be the start of a secret is held back until the next piece
 *   shows whether it is, or the stream ends; see {@link createTextStreamRedactor});
 * - anything else is checked whole, as a result is ({@link checkResultSecrets}), and what cannot be
 *   checked stops the stream with `result_withheld` (the function is told to stop: `return()`).
 *
 * Each chunk passed on is told to the session runtime (a run of text pieces also whole, at its end).
 * `tool_call_completed` is recorded when the stream ends, fails (`is_error`), or is stopped by the caller
 * (`return()`, `throw()`, `close()` of the guard, or its abort signal: `cancelled`, the function's iterator
 * returned too), with `streamed_chunks`, the number of chunks passed on. A read the function does not
 * answer is given up when the caller's signal aborts (it rejects with the signal's reason) or the guard
 * closes.
 */
export async function* runGuardedStream<A extends object, C>(
  deps: GuardedCallDeps,
  call: GuardedCall<A, AsyncIterable<C>>,
): AsyncGenerator<C, void, undefined> {
  const admitted = await admitCall(deps, call);
  let made: unknown;
  try {
    made = await call.run(admitted.arguments);
  } catch (err) {
    throw await failedRun(deps, call, admitted, err);
  }
  if (!isAsyncIterable(made)) {
    const kind = made === null ? "null" : typeof made;
    throw await withheld(deps, call, admitted, `it is no stream (an AsyncIterable) but ${kind}`);
  }
  let source: AsyncIterator<C>;
  try {
    source = (made as AsyncIterable<C>)[Symbol.asyncIterator]();
  } catch (err) {
    throw await failedRun(deps, call, admitted, err);
  }
  const secrets = secretsOf(deps.credentials);
  const values = secrets?.() ?? [];
  const redact = createRedactor(NO_PATTERNS, { secrets: () => values });
  const text = secrets === undefined ? undefined : createTextStreamRedactor(values, (t) => redact(t) as string);
  let chunks = 0;
  let first = true;
  // the current run of text pieces as passed on, and how many pieces it has
  let run = "";
  let pieces = 0;
  const tell = (value: unknown): void => {
    observe(deps, admitted.request, call, value, first);
    first = false;
  };
  const passOn = (value: unknown): void => {
    chunks++;
    tell(value);
  };
  const endRun = (): void => {
    if (pieces > 1) tell(run); // a value split across pieces is seen whole
    run = "";
    pieces = 0;
  };
  const counted = (): Record<string, unknown> => ({ ...admitted.completed(), streamed_chunks: chunks });
  let outcome: "ended" | "failed" | "withheld" | undefined;
  // the caller's cancellation, or the guard closing, ends a read the function does not answer
  const stop = call.signal !== undefined ? AbortSignal.any([deps.signal, call.signal]) : deps.signal;
  let pulling = false;
  try {
    for (;;) {
      let step: IteratorResult<C>;
      try {
        pulling = true;
        step = await pull(source, stop);
        pulling = false;
      } catch (err) {
        if (err instanceof Cancelled) throw err.reason;
        pulling = false;
        outcome = "failed";
        throw await failedRun(deps, call, admitted, err, { streamed_chunks: chunks });
      }
      if (step.done === true) break;
      const value = step.value;
      if (typeof value === "string") {
        // none while what came could be the start of a secret
        for (const out of text === undefined ? [value] : text.push(value)) {
          run += out;
          pieces++;
          passOn(out);
          yield out as C;
        }
        continue;
      }
      // a run of text ends before anything else
      for (const out of text?.end() ?? []) {
        run += out;
        pieces++;
        passOn(out);
        yield out as C;
      }
      endRun();
      const checked = checkResultSecrets(secrets, value);
      if (checked.kind === "withheld") {
        outcome = "withheld";
        throw await withheld(deps, call, admitted, checked.why, { streamed_chunks: chunks });
      }
      passOn(checked.value);
      yield checked.value;
    }
    for (const out of text?.end() ?? []) {
      run += out;
      pieces++;
      passOn(out);
      yield out as C;
    }
    endRun();
    if (first) tell(""); // a stream that gave nothing still ran
    outcome = "ended";
    await recordCompleted(deps, call, { ...counted(), is_error: false });
  } finally {
    if (outcome === undefined || outcome === "withheld") {
      // stopped before its end (by the caller, or withheld): the function is told to stop too; while a read
      // is still unanswered (cancelled), its iterator's `return()` waits for it, so it is not waited for
      const stopped = Promise.resolve()
        .then(() => source.return?.())
        .catch((err: unknown) => {
          const why = withoutSecretValues(deps.credentials, err instanceof Error ? err.message : String(err));
          deps.log(`\`${call.tool}\` on \`${call.server}\` failed as it was stopped: ${why}`);
        });
      if (!pulling) await stopped;
    }
    if (outcome === undefined) {
      endRun();
      await recordCompleted(deps, call, { ...counted(), is_error: false, cancelled: true });
    }
  }
}
