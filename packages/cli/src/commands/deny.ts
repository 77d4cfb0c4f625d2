import type { Command } from "commander";
import { printJson, printLine, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { assertRequestId, recordCliAnswer } from "./approve.js";

/** Registers `acp deny ID [--reason TEXT]`. */
export function registerDeny(parent: Command, ctx: CliContext): void {
  parent
    .command("deny")
    .description("deny a pending consent request from any terminal (see `acp pending`)")
    .argument("<id>", "the consent request id (cr_…)")
    .option("--reason <text>", "why; the agent sees it in the tool error")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  acp deny cr_3f2a…\n  acp deny cr_3f2a… --reason 'wrong recipient'\n\n" +
        "Exit codes: 0 recorded, 2 usage, 3 expired or already decided, 4 unknown id or invalid input.",
    )
    .action((id: string, options: { reason?: string; json?: boolean }) => {
      assertRequestId(id);
      if (options.reason !== undefined && options.reason.length > 500) {
        throw new CliError("--reason: at most 500 characters", EXIT.invalid);
      }
      recordCliAnswer(ctx, {
        id,
        decision: "denied",
        ...(options.reason !== undefined ? { reason: options.reason } : {}),
      });
      if (options.json === true) printJson(ctx, { id, decision: "denied", reason: options.reason ?? null });
      else printLine(ctx, `denied ${id}`);
    });
}
