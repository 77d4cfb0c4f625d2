import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CallAbort } from "../../src/proxy-server/call-abort.js";
import type { AbortWatch } from "../../src/upstream/upstream-relay.js";

// What a caller may do with a call's cancellation, in any order: listen (the relay's `once` listener, or a
// plain one), stop listening, abort (with a reason, or none), look at `aborted` and `reason`.
type Step =
  | { readonly op: "listen"; readonly n: number; readonly once: boolean }
  | { readonly op: "unlisten"; readonly n: number }
  | { readonly op: "abort"; readonly reason: string | undefined }
  | { readonly op: "look" };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant("listen" as const), n: fc.integer({ min: 0, max: 3 }), once: fc.boolean() }),
  fc.record({ op: fc.constant("unlisten" as const), n: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ op: fc.constant("abort" as const), reason: fc.option(fc.string(), { nil: undefined }) }),
  fc.record({ op: fc.constant("look" as const) }),
);

/** What a caller observes of `watch` through `steps` (`abort` is how the owner aborts it). */
function observe(watch: AbortWatch, abort: (reason?: unknown) => void, steps: readonly Step[]): unknown[] {
  const seen: unknown[] = [];
  // the listeners, one function per number, as the relay keeps one per request
  const listeners = [0, 1, 2, 3].map((n) => () => seen.push({ called: n, aborted: watch.aborted }));
  const reasonOf = (): unknown =>
    watch.reason instanceof DOMException ? `${watch.reason.name}: ${watch.reason.message}` : watch.reason;
  for (const s of steps) {
    if (s.op === "listen") watch.addEventListener("abort", listeners[s.n] as () => void, { once: s.once });
    else if (s.op === "unlisten") watch.removeEventListener("abort", listeners[s.n] as () => void);
    else if (s.op === "abort") abort(s.reason);
    else seen.push({ aborted: watch.aborted, reason: reasonOf() });
  }
  seen.push({ aborted: watch.aborted, reason: reasonOf() });
  return seen;
}

describe("CallAbort: a call's cancellation, its AbortSignal made only when asked for", () => {
  it("is observed as an AbortController's signal is, whatever is done with it in whatever order", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), fc.boolean(), (steps, early) => {
        const controller = new AbortController();
        const expected = observe(controller.signal, (r) => controller.abort(r), steps);
        const call = new CallAbort();
        if (early) void call.signal; // made before anything happens, or never until the abort
        expect(observe(call, (r) => call.abort(r), steps)).toStrictEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it("gives an AbortSignal that is aborted, with the same reason, when the call is", () => {
    const before = new CallAbort();
    const signal = before.signal;
    const heard: unknown[] = [];
    signal.addEventListener("abort", () => heard.push(signal.reason));
    before.abort("the client cancelled");
    expect(signal.aborted).toBe(true);
    expect(heard).toStrictEqual(["the client cancelled"]);

    const after = new CallAbort();
    after.abort();
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBeInstanceOf(DOMException);
    expect(after.reason).toBe(after.signal.reason);
  });

  it("runs the signal's listeners, then its own, and the others when one throws", async () => {
    const call = new CallAbort();
    const order: string[] = [];
    call.signal.addEventListener("abort", () => order.push("signal"));
    call.addEventListener("abort", () => {
      order.push("first");
      throw new Error("a listener failed");
    });
    call.addEventListener("abort", () => order.push("second"));
    const uncaught = new Promise<unknown>((resolve) => process.once("uncaughtException", resolve));
    call.abort("stop");
    expect(order).toStrictEqual(["signal", "first", "second"]);
    expect(((await uncaught) as Error).message).toBe("a listener failed");
  });
});
