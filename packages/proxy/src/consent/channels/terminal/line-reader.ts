import { createInterface, type Interface } from "node:readline";
import { abortError } from "../../timers.js";

/**
 * Reads typed lines one question at a time. Lines typed while nobody is asking are dropped, so a stale
 * keystroke never answers the next request.
 */
export class LineReader {
  readonly #rl: Interface;
  #waiter: { resolve: (line: string) => void } | null = null;

  constructor(input: NodeJS.ReadableStream) {
    this.#rl = createInterface({ input, terminal: false });
    this.#rl.on("line", (line) => {
      const waiter = this.#waiter;
      this.#waiter = null;
      waiter?.resolve(line);
    });
  }

  /** The next line typed, or a rejection when `signal` aborts first or the input ends. */
  next(signal: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(abortError(signal));
        return;
      }
      const onAbort = (): void => {
        this.#waiter = null;
        this.#rl.off("close", onClose);
        reject(abortError(signal));
      };
      const onClose = (): void => {
        signal.removeEventListener("abort", onAbort);
        reject(new Error("the terminal closed"));
      };
      this.#rl.once("close", onClose);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiter = {
        resolve: (line) => {
          signal.removeEventListener("abort", onAbort);
          this.#rl.off("close", onClose);
          resolve(line);
        },
      };
    });
  }

  /** Stops reading. */
  close(): void {
    this.#rl.close();
  }
}
