import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp init` (not implemented yet). */
export function registerInit(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("init")
    .description("create $ACP_HOME with config, a safe policy and encrypted keys (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp init` is not implemented yet", EXIT.error);
    });
}
