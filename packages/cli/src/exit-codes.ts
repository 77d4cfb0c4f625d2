/** Exit codes across the CLI; scripts rely on them. */
export const EXIT = {
  /** Success (and: the tool may execute). */
  ok: 0,
  /** An error: I/O, a crash, something the person did not cause. */
  error: 1,
  /** Usage: unknown command or option, missing argument. */
  usage: 2,
  /** Refused / not allowed / verification failed. */
  refused: 3,
  /** Invalid input: a policy, graph, event or file that does not validate. */
  invalid: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error a command throws to stop with a message and an exit code. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode = EXIT.error) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}
