import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import type { CliIo } from "../context.js";

/** Asks one question and reads one line; `undefined` when the input ended. */
export interface LinePrompter {
  ask(question: string): Promise<string | undefined>;
  /** Writes a line for the person (questions and previews go to stderr: stdout may carry the intent). */
  say(line: string): void;
  close(): void;
}

/**
 * A prompter over the CLI's streams: readline over `io.stdin` (the terminal, or a pipe with `--interactive`),
 * or over the text of `io.readStdin()` where there is no stream (tests). Questions go to stderr. When the input
 * ends, every later question answers `undefined`: a dialogue never hangs on a closed stdin.
 */
export async function createLinePrompter(io: CliIo): Promise<LinePrompter> {
  const input: NodeJS.ReadableStream = io.stdin ?? Readable.from([await io.readStdin()]);
  const rl = createInterface({ input, terminal: false, crlfDelay: Infinity });
  const lines = rl[Symbol.asyncIterator]();
  let ended = false;
  return {
    async ask(question) {
      io.stderr.write(question);
      if (ended) return undefined;
      const next = await lines.next();
      if (next.done === true) {
        ended = true;
        io.stderr.write("\n");
        return undefined;
      }
      return next.value;
    },
    say: (line) => void io.stderr.write(`${line}\n`),
    close: () => rl.close(),
  };
}
