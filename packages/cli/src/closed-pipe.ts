/** What `endOnClosedPipe` needs of the process (the real one in `bin/acp.js`; a stand-in in tests). */
export interface PipedProcess {
  readonly stdout: NodeJS.EventEmitter;
  readonly stderr: NodeJS.EventEmitter;
  exitCode?: number | string | undefined;
  listenerCount(event: "SIGTERM"): number;
  emit(event: "SIGTERM"): boolean;
  exit(code?: number | string): never;
}

const CLOSED = new Set(["EPIPE", "ERR_STREAM_DESTROYED"]);

/**
 * Ends `acp` quietly when whoever reads its output goes away (`acp audit tail | head`), as a pipe's writer
 * does, instead of dying on an unhandled `EPIPE`. A command with a SIGTERM path (`acp proxy` on stdio,
 * `acp serve`) shuts down through it, so pending consent is withdrawn and the audit flushed; any other
 * command (`acp audit tail --follow` too) ends with the exit code it has so far. A write error
 * that is not a closed pipe is thrown as before. Closed-pipe errors on stderr are ignored: there is nowhere
 * left to say anything.
 */
export function endOnClosedPipe(proc: PipedProcess): void {
  let ended = false;
  proc.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (!CLOSED.has(err.code ?? "")) throw err;
    if (ended) return;
    ended = true;
    if (proc.listenerCount("SIGTERM") > 0) proc.emit("SIGTERM");
    else proc.exit(proc.exitCode ?? 0);
  });
  proc.stderr.on("error", (err: NodeJS.ErrnoException) => {
    if (!CLOSED.has(err.code ?? "")) throw err;
  });
}
