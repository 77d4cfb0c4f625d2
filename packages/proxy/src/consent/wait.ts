import type { ChannelDelivery, ConsentChannel } from "./types.js";

/** How waiting for a person ended. */
export type WaitResult =
  | { readonly kind: "answer"; readonly answer: unknown; readonly channel: ConsentChannel }
  | { readonly kind: "failed"; readonly messages: readonly string[] }
  | { readonly kind: "expired" }
  | { readonly kind: "withdrawn" };

/** The abort reasons the broker uses on a request's controller. */
export const ABORT_EXPIRED = "expired";
export const ABORT_WITHDRAWN = "withdrawn";
export const ABORT_ANSWERED = "answered";

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Delivers to every channel at once; the first answer wins. Resolves `expired` / `withdrawn` when `control`
 * aborts with that reason, `failed` when every channel failed to deliver. Never rejects.
 */
export function waitForFirstAnswer(
  channels: readonly ConsentChannel[],
  delivery: Omit<ChannelDelivery, "signal">,
  control: AbortController,
): Promise<WaitResult> {
  return new Promise<WaitResult>((resolve) => {
    const failures: string[] = [];
    let done = false;
    const finish = (result: WaitResult): void => {
      if (done) return;
      done = true;
      control.signal.removeEventListener("abort", onAbort);
      resolve(result);
    };
    const onAbort = (): void => {
      const reason: unknown = control.signal.reason;
      finish(reason === ABORT_EXPIRED ? { kind: "expired" } : { kind: "withdrawn" });
    };
    if (control.signal.aborted) {
      onAbort();
      return;
    }
    control.signal.addEventListener("abort", onAbort, { once: true });
    for (const channel of channels) {
      let pending: Promise<unknown>;
      try {
        pending = channel.deliver({ ...delivery, signal: control.signal });
      } catch (error) {
        pending = Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      pending.then(
        (answer) => finish({ kind: "answer", answer, channel }),
        (error: unknown) => {
          failures.push(`${channel.name}: ${messageOf(error)}`);
          if (failures.length === channels.length) finish({ kind: "failed", messages: failures });
        },
      );
    }
  });
}
