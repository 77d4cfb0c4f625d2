import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp approve` (not implemented yet). */
export function registerApprove(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("approve")
    .description("approve a pending consent request (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp approve` is not implemented yet", EXIT.error);
    });
}
