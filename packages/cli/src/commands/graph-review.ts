import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp graph review` (not implemented yet). */
export function registerGraphReview(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("review")
    .description("record a review of the consent graph (resets consent decay) (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp graph review` is not implemented yet", EXIT.error);
    });
}
