import { createInterface, type Interface } from "node:readline";
import { abortError } from "../../timers.js";

/**
 * Reads typed lines for the prompt. Lines are kept in order until asked for; `discardTyped()` drops what was
 * typed before a question was shown, so a stale keystroke never answers the next request.
 */
export class LineReader {
  readonly #rl: Interface;
  readonly #buffered: string[] = [];
  #waiter: ((line: string) => void) | null = null;
  #closed = false;

  constructor(input: NodeJS.ReadableStream) {
    this.#rl = createInterface({ input, terminal: false });
    this.#rl.on("line", (line) => {
      const waiter = this.#waiter;
      this.#waiter = null;
      if (waiter === null) this.#buffered.push(line);
      else waiter(line);
    });
    this.#rl.on("close", () => {
      this.#closed = true;
    });
  }

  /** Forgets lines typed while nobody was asking. */
  discardTyped(): void {
    this.#buffered.length = 0;
  }

  /** The next line typed, or a rejection when `signal` aborts first or the input ends. */
  next(signal: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(abortError(signal));
      const line = this.#buffered.shift();
      if (line !== undefined) return resolve(line);
      if (this.#closed) return reject(new Error("the terminal closed"));
      const cleanup = (): void => {
        this.#waiter = null;
        signal.removeEventListener("abort", onAbort);
        this.#rl.off("close", onClose);
      };
      const onAbort = (): void => {
        cleanup();
        reject(abortError(signal));
      };
      const onClose = (): void => {
        cleanup();
        reject(new Error("the terminal closed"));
      };
      this.#rl.once("close", onClose);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiter = (typed) => {
        cleanup();
        resolve(typed);
      };
    });
  }

  /** Stops reading. */
  close(): void {
    this.#rl.close();
  }
}
