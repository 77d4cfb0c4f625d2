import { run } from "../src/main.js";
import type { CliContext, CliIo } from "../src/context.js";

/** The captured outcome of one in-process CLI run. */
export interface CliOutcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `acp ARGV` in-process with captured output. */
export async function runCli(
  argv: readonly string[],
  options: { stdin?: string; env?: Record<string, string>; cwd?: string; now?: Date } = {},
): Promise<CliOutcome> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    readStdin: () => Promise.resolve(options.stdin ?? ""),
    stdinIsTTY: false,
    env: options.env ?? { HOME: "/nonexistent-home" },
    cwd: options.cwd ?? process.cwd(),
    now: () => options.now ?? new Date("2026-01-15T12:00:00Z"),
  };
  const code = await run(argv, io);
  return { code, stdout, stderr };
}

/** A context that writes nowhere, reads no stdin and sees only `env`, for calling a command's code directly. */
export function silentContext(env: Record<string, string> = {}, cwd = "/"): CliContext {
  return {
    exitCode: 0,
    io: {
      stdout: { write: () => true },
      stderr: { write: () => true },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      env,
      cwd,
      now: () => new Date(),
    },
  };
}
