import { closeSync, openSync } from "node:fs";
import { ReadStream, WriteStream } from "node:tty";

/** The two ends of a terminal the channel talks to. */
export interface TerminalStreams {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  /** Releases the terminal. */
  close(): void;
}

/**
 * Opens the controlling terminal (`/dev/tty`), not stdin/stdout (those carry MCP). Null when the process has
 * no controlling terminal (a daemon, CI, a desktop app spawning the proxy).
 */
export function openControllingTerminal(path = "/dev/tty"): TerminalStreams | null {
  let readFd: number | undefined;
  try {
    readFd = openSync(path, "r");
    const writeFd = openSync(path, "w");
    const input = new ReadStream(readFd);
    const output = new WriteStream(writeFd);
    // The terminal alone must not keep the proxy alive once MCP is done.
    input.unref();
    output.unref();
    return {
      input,
      output,
      close: () => {
        input.destroy();
        output.destroy();
      },
    };
  } catch {
    if (readFd !== undefined) closeSync(readFd);
    return null;
  }
}
