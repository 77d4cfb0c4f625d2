import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp pending` (not implemented yet). */
export function registerPending(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("pending")
    .description("list consent requests waiting for a person (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp pending` is not implemented yet", EXIT.error);
    });
}
