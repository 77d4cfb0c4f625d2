import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { printableJsonText } from "@acp/core";
import type { ExitCode } from "./exit-codes.js";

/** Where a command reads and writes; replaced in tests to run the CLI in-process. */
export interface CliIo {
  readonly stdout: { write(chunk: string): unknown };
  readonly stderr: { write(chunk: string): unknown };
  /** Reads all of standard input as text. */
  readonly readStdin: () => Promise<string>;
  /** Whether stdin is an interactive terminal. */
  readonly stdinIsTTY: boolean;
  /** Whether stdout is a terminal (what a command prints there must not hold raw escape sequences). */
  readonly stdoutIsTTY?: boolean;
  /** Standard input as a stream, for line-by-line dialogues (absent in tests: `readStdin` is read instead). */
  readonly stdin?: NodeJS.ReadableStream;
  /** Asks on the terminal without echoing the answer (passphrases, secrets); absent where there is none. */
  readonly promptHidden?: (question: string) => Promise<string>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** The clock; injectable so tests replay the same. */
  readonly now: () => Date;
}

/** Handed to every command's `register` function. */
export interface CliContext {
  readonly io: CliIo;
  /** Set by a command's action; the process exits with it. */
  exitCode: ExitCode;
}

/** `$ACP_HOME`, default `~/.acp`. */
export function resolveHome(io: CliIo): string {
  const fromEnv = io.env["ACP_HOME"];
  if (fromEnv !== undefined && fromEnv !== "") return resolvePath(io, fromEnv);
  return join(io.env["HOME"] ?? homedir(), ".acp");
}

/** Resolves a path the person typed against the working directory (and `~`). */
export function resolvePath(io: CliIo, path: string): string {
  if (path === "~" || path.startsWith("~/")) return join(io.env["HOME"] ?? homedir(), path.slice(1));
  return isAbsolute(path) ? path : resolve(io.cwd, path);
}

/** Prints a line to stdout. */
export function printLine(ctx: CliContext, line: string): void {
  ctx.io.stdout.write(`${line}\n`);
}

/** Prints a line to stderr. */
export function printError(ctx: CliContext, line: string): void {
  ctx.io.stderr.write(`${line}\n`);
}

/** Prints a value as pretty JSON to stdout. */
export function printJson(ctx: CliContext, value: unknown): void {
  const json = JSON.stringify(value, null, 2);
  // to a terminal, what the data holds of C1 controls, bidi overrides and invisible characters is shown as
  // `\uXXXX` escapes (the same JSON value); piped, the JSON as written
  ctx.io.stdout.write(`${ctx.io.stdoutIsTTY === true ? printableJsonText(json) : json}\n`);
}
