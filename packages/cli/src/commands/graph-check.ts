import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp graph check` (not implemented yet). */
export function registerGraphCheck(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("check")
    .description("classify DOMAIN ACTION [CONFIDENCE] against the consent graph (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp graph check` is not implemented yet", EXIT.error);
    });
}
