import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp policy validate` (not implemented yet). */
export function registerPolicyValidate(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("validate")
    .description("check a policy file and report every problem as FILE:LINE:COL (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp policy validate` is not implemented yet", EXIT.error);
    });
}
