/** The names a framework gives the cancellation it hands a tool: the Vercel AI SDK's `abortSignal`, LangChain's `signal`. */
const SIGNAL_KEYS = ["abortSignal", "signal"] as const;

/** What an abort signal must have to be taken for one (one from another realm or a polyfill too). */
interface SignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

function isSignalLike(value: unknown): value is SignalLike {
  if (value instanceof AbortSignal) return true;
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<Record<keyof SignalLike, unknown>>;
  return (
    typeof candidate.aborted === "boolean" &&
    typeof candidate.addEventListener === "function" &&
    typeof candidate.removeEventListener === "function"
  );
}

/** A property read that cannot throw (a getter that throws, a revoked proxy): `undefined` then. */
function read(holder: object, key: string): unknown {
  try {
    return (holder as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** The cancellation of one call, and how to stop listening to the caller's signals once the call is over. */
export interface CallSignal {
  readonly signal: AbortSignal | undefined;
  readonly release: () => void;
}

const NONE: CallSignal = { signal: undefined, release: () => undefined };

/**
 * The cancellation a framework hands a tool function after its arguments: every `abortSignal` or `signal`
 * in any of them (the AI SDK's `options.abortSignal`; LangChain's `config.signal`, which `tool()` passes
 * second and a `DynamicStructuredTool` third), as one `AbortSignal` aborted when any of them is. A
 * signal from another realm or a polyfill (anything with `aborted`, `addEventListener` and
 * `removeEventListener`) counts too: it is followed by a signal of this realm, so a cancellation is never
 * missed for not being an `instanceof AbortSignal`. `undefined` when there is none.
 */
export function callSignal(rest: readonly unknown[]): CallSignal {
  const found: SignalLike[] = [];
  for (const arg of rest) {
    if (typeof arg !== "object" || arg === null) continue;
    for (const key of SIGNAL_KEYS) {
      const value = read(arg, key);
      if (isSignalLike(value) && !found.includes(value)) found.push(value);
    }
  }
  if (found.length === 0) return NONE;
  const only = found[0];
  if (found.length === 1 && only instanceof AbortSignal) return { signal: only, release: () => undefined };
  const controller = new AbortController();
  const listeners: (() => void)[] = [];
  for (const given of found) {
    if (given.aborted) {
      controller.abort(given.reason);
      break;
    }
    const onAbort = (): void => controller.abort(given.reason);
    given.addEventListener("abort", onAbort, { once: true });
    listeners.push(() => given.removeEventListener("abort", onAbort));
  }
  return { signal: controller.signal, release: () => listeners.forEach((stop) => stop()) };
}
