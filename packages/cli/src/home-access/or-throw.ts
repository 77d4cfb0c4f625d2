import { formatIssue, type Result } from "@acp/core";
import { CliError, EXIT, type ExitCode } from "../exit-codes.js";

/** The value of a result, or a {@link CliError} with its first issue's message and `exitCode`. */
export function orThrow<T>(result: Result<T>, exitCode: ExitCode = EXIT.error): T {
  if (result.ok) return result.value;
  const first = result.issues[0];
  throw new CliError(first === undefined ? "failed" : formatIssue(first), exitCode);
}
