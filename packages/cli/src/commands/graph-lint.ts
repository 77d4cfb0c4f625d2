import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp graph lint` (not implemented yet). */
export function registerGraphLint(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("lint")
    .description("report problems in a consent graph (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp graph lint` is not implemented yet", EXIT.error);
    });
}
