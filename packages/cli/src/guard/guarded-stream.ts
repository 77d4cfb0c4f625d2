import { withoutSecretValues } from "@acp/proxy/gate";
import { messageOf } from "./error-secrets.js";
import { createChunkStreamRedactor, PlaceTexts, type ChunkStep } from "./stream-chunks.js";
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
 * - each chunk is checked as a result is ({@link checkResultSecrets}), and what cannot be checked stops
 *   the stream with `result_withheld` (the function is told to stop: `return()`);
 * - the strings at one place in successive chunks (a string chunk, a path of keys in an object chunk) are
 *   pieces of one text: every vault value in them is replaced, and so is one split across pieces (a chunk
 *   whose string could end in the start of a secret is held back, the chunks after it waiting behind it,
 *   until a later one shows whether it does, or the stream ends; see {@link createChunkStreamRedactor}).
 *   With `textFields` (the tool's option), only the strings at those fields of the object chunks are such
 *   pieces; the others are checked whole in their chunk and never hold the stream back.
 *   What is held back when the stream fails, is withheld or is stopped is dropped, and counted in
 *   `tool_call_completed` as `held_back_chunks`.
 *
 * Each chunk passed on is told to the session runtime (a run of text pieces also whole, at its end, and
 * the texts at each place of the object chunks joined, at the stream's end).
 * `tool_call_completed` is recorded when the stream ends, fails (`is_error`), or is stopped by the caller
 * (`return()`, `throw()`, `close()` of the guard, or its abort signal: `cancelled`, the function's iterator
 * returned too), with `streamed_chunks`, the number of chunks passed on. A read the function does not
 * answer is given up when the caller's signal aborts (it rejects with the signal's reason) or the guard
 * closes.
 */
export async function* runGuardedStream<A extends object, C>(
  deps: GuardedCallDeps,
  call: GuardedCall<A, AsyncIterable<C>>,
  textFields?: readonly string[],
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
  // without credentials the guard gave the call no secret: every chunk is passed on as it is
  const redactor = secrets === undefined ? undefined : createChunkStreamRedactor(secrets(), textFields);
  let chunks = 0;
  let first = true;
  // the current run of text pieces as passed on, and how many pieces it has
  let run = "";
  let pieces = 0;
  const tell = (value: unknown): void => {
    observe(deps, admitted.call, call, value);
    first = false;
  };
  // the texts at each place of the object chunks passed on, told joined at the end (as a run of pieces is)
  const places = new PlaceTexts();
  const endRun = (): void => {
    if (pieces > 1) tell(run); // a value split across pieces is seen whole
    run = "";
    pieces = 0;
  };
  const endAll = (): void => {
    endRun();
    for (const text of places.joined()) tell(text);
  };
  const passOn = (value: unknown): void => {
    chunks++;
    if (typeof value === "string") {
      run += value;
      pieces++;
    } else {
      endRun(); // a run of text ends before anything else
      places.add(value);
    }
    tell(value);
  };
  // the chunks passed on, and those held back that never will be (the stream stopped before it showed what they hold)
  const tally = (): Record<string, unknown> => {
    const heldBack = redactor?.holding ?? 0;
    return { streamed_chunks: chunks, ...(heldBack > 0 ? { held_back_chunks: heldBack } : {}) };
  };
  const counted = (): Record<string, unknown> => ({ ...admitted.completed(), ...tally() });
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
        throw await failedRun(deps, call, admitted, err, tally());
      }
      const shown: ChunkStep =
        step.done === true
          ? (redactor?.end() ?? { kind: "shown", chunks: [] })
          : (redactor?.push(step.value) ?? { kind: "shown", chunks: [step.value] });
      if (shown.kind === "withheld") {
        outcome = "withheld";
        throw await withheld(deps, call, admitted, shown.why, tally());
      }
      for (const out of shown.chunks) {
        passOn(out);
        yield out as C;
      }
      if (step.done === true) break;
    }
    endAll();
    if (first) tell(""); // a stream that gave nothing still answered its call (counted as it was let through)
    outcome = "ended";
    await recordCompleted(deps, call, { ...counted(), is_error: false });
  } finally {
    if (outcome === undefined || outcome === "withheld") {
      // stopped before its end (by the caller, or withheld): the function is told to stop too; while a read
      // is still unanswered (cancelled), its iterator's `return()` waits for it, so it is not waited for
      const stopped = Promise.resolve()
        .then(() => source.return?.())
        .catch((err: unknown) => {
          const why = withoutSecretValues(deps.credentials, messageOf(err));
          deps.log(`\`${call.tool}\` on \`${call.server}\` failed as it was stopped: ${why}`);
        });
      if (!pulling) await stopped;
    }
    // what was passed on before a failure or a stop is known whole where it came from too
    if (outcome !== "ended") endAll();
    if (outcome === undefined) {
      await recordCompleted(deps, call, { ...counted(), is_error: false, cancelled: true });
    }
  }
}
