/** The timers the consent code uses; injected so tests control time instead of waiting. */
export interface ConsentTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real timers. Handles are unref'd so a pending consent never keeps a process alive on its own. */
export const realTimers: ConsentTimers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms`, or rejects with the signal's reason as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal, timers: ConsentTimers = realTimers): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = (): void => {
      timers.clearTimeout(handle);
      reject(abortError(signal));
    };
    const handle = timers.setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The error a consent operation rejects with when its signal aborts. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  const error = new Error(`consent delivery aborted: ${typeof reason === "string" ? reason : "aborted"}`);
  error.name = "AbortError";
  return error;
}
