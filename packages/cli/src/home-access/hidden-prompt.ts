/**
 * Asks a question on the terminal and reads an answer without echoing it (passphrases, secret values).
 * Raw mode on the process's own stdin; Enter ends, Backspace deletes, Ctrl-C or Ctrl-D aborts.
 */
export function promptHiddenOnTerminal(question: string): Promise<string> {
  const stdin = process.stdin;
  const stderr = process.stderr;
  return new Promise((resolve, reject) => {
    if (!stdin.isTTY) {
      reject(new Error("stdin is not a terminal"));
      return;
    }
    let answer = "";
    const done = (err?: Error): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      stderr.write("\n");
      if (err !== undefined) reject(err);
      else resolve(answer);
    };
    const onData = (chunk: Buffer): void => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done();
        if (ch === "\u0003" || ch === "\u0004") return done(new Error("aborted"));
        if (ch === "\u007f" || ch === "\b") answer = answer.slice(0, -1);
        else if (ch >= " ") answer += ch;
      }
    };
    stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onData);
  });
}
