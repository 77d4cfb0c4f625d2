import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp deny` (not implemented yet). */
export function registerDeny(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("deny")
    .description("deny a pending consent request (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp deny` is not implemented yet", EXIT.error);
    });
}
